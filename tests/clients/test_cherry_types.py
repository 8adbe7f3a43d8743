"""Every Cherry Studio provider type streams through the proxy
by way of ``@cherrystudio/ai-core``, from every upstream protocol.

Each provider type (:data:`streamscope.client.cherry.TYPES`: the values File → Connect
Cherry Studio… shows) is driven as Cherry Studio drives it: ai-core's
``streamText(providerId, {apiKey, baseURL, ...}, params)`` with the base URL Cherry Studio
makes of the API host the user typed (tests/clients/node/cherry.mjs, all jobs in one
node process). Each conversation is two turns: ``demo-reasoning`` (reasoning, then text),
then ``demo-tools`` (a tool loop: the call, the tool run by the client, then text).

The upstreams: a second proxy serving its demo behind the first, reached in each protocol
(Anthropic, OpenAI Chat, Responses in repair and passthrough, LM Studio, Gemini), and the
first proxy's own demo.

Two providers read only a form of their own, which the proxy writes for them (it knows
them by their User-Agent: ``Codec.client_options``), so both work over every upstream:
- @ai-sdk/xai (Grok) takes a tool call only whole, as xAI's API sends it (a call
  streamed in pieces, OpenAI's own form, fails its schema): its calls go out whole, and
  its tool loop runs;
- OpenRouter's provider reads reasoning only from ``reasoning``: its reasoning goes there.

What a provider type does not show is its own limit, asserted so that a change shows:
- @ai-sdk/openai's ``.chat()`` (OpenAI built-in, Azure on Chat Completions) reads no
  reasoning from a Chat stream;
- over LM Studio's /api/v1/chat no client tools go up (the demo answers in text).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from streamscope.client.cherry import MODEL, TYPES, CherryType
from streamscope.lint.sender import sender_of
from tests.clients.support import INSTALL_TIMEOUT, node_tools, run_json
from tests.clients.test_cherry_responses import cherry_modules
from tests.proxy.demo_support import demo_config
from tests.proxy.harness import KEY, Running, make_config, proxied

pytestmark = pytest.mark.timeout(INSTALL_TIMEOUT)

UPSTREAMS = ["demo", "ant", "chat", "rrep", "rpass", "lms", "gem"]
TURNS = ["demo-reasoning", "demo-tools"]
THOUGHT = "Having thought it over"  # demo-reasoning's answer
# What each provider type cannot show, whatever the proxy does (see the module's doc).
NO_REASONING = {"openai-chat", "azure"}


@contextmanager
def chain() -> Iterator[Running]:
    """The front proxy, whose upstreams reach a second proxy's demo in every protocol."""
    with proxied(demo_config()) as back:
        account = [{"api_key": KEY}]

        def up(name: str, protocol: str, base: str) -> dict[str, Any]:
            return {"name": name, "protocol": protocol, "base_url": base, "accounts": account}

        upstreams = [
            up("ant", "anthropic", back.url),
            up("chat", "openai-chat", back.v1),
            up("lms", "lmstudio", back.url),
            up("rrep", "responses", back.v1),
            up("rpass", "responses", back.v1) | {"mode": "passthrough"},
            up("gem", "gemini", back.url),
            {"name": "demo", "protocol": "demo", "demo": {"first_token_seconds": 0.0}},
        ]
        with proxied(make_config(upstreams)) as front:
            yield front


@pytest.fixture(scope="module")
def runs() -> Iterator[dict[tuple[str, str], Any]]:
    """Every (provider type, upstream) conversation, run by one node process."""
    folder = cherry_modules()
    node = node_tools()
    assert node is not None
    with chain() as front:
        jobs = [
            {
                "provider": t.id,
                "settings": t.settings,
                "baseURL": t.base_url(front.url),  # the API host typed: the proxy's root
                "key": front.key,
                "models": [f"{u}/{m}" for m in TURNS],
                "steps": 4,
            }
            for t in TYPES
            for u in UPSTREAMS
        ]
        # the model Connect Cherry Studio… gives, as typed (the catalog routes it)
        jobs += [
            {"provider": t.id, "settings": t.settings, "baseURL": t.base_url(front.url)}
            | {"key": front.key, "models": [MODEL], "steps": 1}
            for t in TYPES
        ]
        out = run_json(
            [node[0], str(Path(folder.path) / "cherry.mjs"), json.dumps(jobs)], timeout=300
        )
        keys = [(t.id, u) for t in TYPES for u in UPSTREAMS] + [(t.id, MODEL) for t in TYPES]
        yield dict(zip(keys, out, strict=True)) | {("", "url"): front.url}


# The lint profile each type's requests name (their User-Agent: lint/sender.py)
SENDER = {
    "openai-compatible": "cherry-compatible",
    "openai-chat": "cherry-openai",
    "openai-response": "cherry-responses",
    "anthropic": "cherry-anthropic",
    "gemini": "cherry-gemini",
    "azure": "cherry-azure",
    "azure-responses": "cherry-responses",
    "deepseek": "cherry-deepseek",
    "xai": "cherry-xai",
    "openrouter": "cherry-openrouter",
}


def _check_requests(run: dict[str, Any], t: CherryType, url: str) -> None:
    """Every request went under the base URL, with the key in the type's header only,
    and names the type's profile in its User-Agent."""
    base = urlsplit(t.base_url(url)).path
    assert run["requests"]
    for sent in run["requests"]:
        assert urlsplit(sent["url"]).path.startswith(base + "/"), sent["url"]
        said = [("user-agent", sent["ua"] or "")]
        assert sender_of(said, urlsplit(sent["url"]).path) == SENDER[t.id], sent["ua"]
        assert list(sent["keys"]) == [t.key_header]
        assert KEY in sent["keys"][t.key_header]


@pytest.mark.parametrize("up", UPSTREAMS)
@pytest.mark.parametrize("t", TYPES, ids=[t.id for t in TYPES])
def test_each_provider_type_streams_text_reasoning_and_a_tool_loop(
    runs: dict[tuple[str, str], Any], t: CherryType, up: str
) -> None:
    run = runs[(t.id, up)]
    _check_requests(run, t, runs[("", "url")])
    thought = run["turns"][0]
    assert thought["text"].startswith(THOUGHT) and thought["finish"] == "stop"
    if t.id in NO_REASONING:
        assert thought["reasoning"] == ""
    else:
        assert thought["reasoning"].startswith("The user wrote")
    assert run["error"] is None, run["error"]
    loop = run["turns"][1]
    if up == "lms":  # LM Studio's /api/v1/chat carries no client tools
        assert loop["steps"] == 1 and loop["text"].startswith("This protocol carries no")
        assert run["calls"] == []
    else:
        assert loop["steps"] == 2 and loop["text"].startswith("Thanks. get_weather returned")
        assert len(run["calls"]) == 1 and run["calls"][0]["location"]
        assert loop["finish"] == "stop"


@pytest.mark.parametrize("t", TYPES, ids=[t.id for t in TYPES])
def test_the_model_the_connect_dialog_gives_answers_each_type(
    runs: dict[tuple[str, str], Any], t: CherryType
) -> None:
    run = runs[(t.id, MODEL)]
    assert run["error"] is None, run["error"]
    _check_requests(run, t, runs[("", "url")])
    assert run["turns"][0]["text"] and run["turns"][0]["finish"] == "stop"
