"""Cherry Studio's "OpenAI-Response" provider type, with
``store`` left at its default, completes multi-step tool loops over every upstream
protocol.

Cherry Studio's provider runs on ``@cherrystudio/ai-core`` (``streamText("openai-response",
...)``: ``@ai-sdk/openai``'s ``.responses()`` model on ``ai`` 6), installed here at pinned
versions and driven by tests/clients/node/cherry.mjs. Each conversation is two turns with
a tool that executes: ``demo-reasoning`` answers (reasoning, then text), then
``demo-tools`` runs a tool loop (a call, the tool's result, then text). The SDK sends the
first answer's reasoning and message back as ``item_reference``s to the ids the proxy
handed out, at each step of the loop, so every one of them needs the proxy's
conversation state.

The upstreams: a second StreamScope proxy serving its demo backend, as the first proxy's
upstream in each protocol (Anthropic, OpenAI Chat, Responses in repair and in passthrough,
LM Studio), and the demo itself.
"""

from __future__ import annotations

import base64
import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from streamscope.lint.clients import NODE_PINS as PROVIDER_PINS
from streamscope.realclients.node import locked
from tests.clients.support import (
    CACHE,
    HERE,
    INSTALL_TIMEOUT,
    MARKER,
    Installed,
    _digest,
    _marker,
    _run_install,
    node_tools,
    run_json,
)
from tests.proxy.demo_support import demo_chain
from tests.proxy.harness import Running

pytestmark = pytest.mark.timeout(INSTALL_TIMEOUT)

# Exact versions: ai-core's newest (`npm view @cherrystudio/ai-core version`), on the `ai` 6
# line and the @ai-sdk/openai 3 line the repo pins for Cherry Studio's providers; Google's
# provider is a peer dependency of ai-core (`npm view @ai-sdk/google@3 version`).
CHERRY_PINS: dict[str, str] = {
    "@cherrystudio/ai-core": "2.0.1",
    "ai": PROVIDER_PINS["ai"],
    "@ai-sdk/openai": PROVIDER_PINS["@ai-sdk/openai"],
    "@ai-sdk/google": "3.0.141",
    "zod": PROVIDER_PINS["zod"],
    # ai-core's own dependencies, at the versions its ranges resolved to when pinned, so
    # each provider type runs the same code on every machine (tests/clients/test_cherry_types.py)
    "@ai-sdk/anthropic": PROVIDER_PINS["@ai-sdk/anthropic"],
    "@ai-sdk/azure": "3.0.128",
    "@ai-sdk/deepseek": "2.0.69",
    "@ai-sdk/openai-compatible": PROVIDER_PINS["@ai-sdk/openai-compatible"],
    "@ai-sdk/xai": "3.0.138",
    "@openrouter/ai-sdk-provider": "2.10.0",
}
UPSTREAMS = ["ant", "chat", "rrep", "rpass", "lms", "demo"]
TURNS = ["demo-reasoning", "demo-tools"]
STEPS = 4


def cherry_modules() -> Installed:
    """A folder with ai-core installed and cherry.mjs beside it (made once, then reused)."""
    tools = node_tools()
    if tools is None:
        pytest.skip("node and npm are needed for Cherry Studio's ai-core and are not on PATH")
    path = CACHE / f"cherry-{_digest(CHERRY_PINS)}"
    with locked(CACHE / f"{path.name}.lock"):
        marker = _marker(path)
        cold = marker is None or marker.get("pins") != CHERRY_PINS
        if cold:
            shutil.rmtree(path, ignore_errors=True)
            path.mkdir(parents=True)
            package = {"private": True, "type": "module", "dependencies": CHERRY_PINS}
            (path / "package.json").write_text(json.dumps(package, indent=1))
            start = time.monotonic()
            npm = [tools[1], "install", "--no-audit", "--no-fund", "--loglevel=error"]
            _run_install(npm, path, "Cherry Studio's ai-core")
            marker = {"pins": CHERRY_PINS, "install_seconds": round(time.monotonic() - start, 1)}
            (path / MARKER).write_text(json.dumps(marker, indent=1))
        assert marker is not None
        shutil.copyfile(HERE / "node" / "cherry.mjs", path / "cherry.mjs")
    return Installed(path, float(marker["install_seconds"]), cold)


@pytest.fixture(scope="module")
def proxies() -> Iterator[tuple[Running, Running]]:
    """(the front proxy the client talks to, the second proxy serving the demo behind it)."""
    with demo_chain() as pair:
        yield pair


@pytest.fixture(scope="module")
def runs(proxies: tuple[Running, Running]) -> dict[str, Any]:
    """Each upstream's conversation, run once by Cherry Studio's provider."""
    folder = cherry_modules()
    front, _ = proxies
    jobs = [
        {"baseURL": front.v1, "key": front.key, "models": [f"{u}/{m}" for m in TURNS]}
        | {"steps": STEPS}
        for u in UPSTREAMS
    ]
    node = node_tools()
    assert node is not None
    out = run_json([node[0], str(Path(folder.path) / "cherry.mjs"), json.dumps(jobs)], timeout=240)
    return dict(zip(UPSTREAMS, out, strict=True))


def references(body: dict[str, Any]) -> list[str]:
    return [i["id"] for i in body["input"] if i.get("type") == "item_reference"]


@pytest.mark.parametrize("up", UPSTREAMS)
def test_cherry_studio_completes_its_tool_loop_with_store_left_on(
    runs: dict[str, Any], up: str
) -> None:
    run = runs[up]
    assert run["error"] is None, run["error"]
    bodies = run["bodies"]
    assert all("store" not in b for b in bodies)  # left at its default: true
    thought, loop = run["turns"]
    assert thought["steps"] == 1 and thought["text"].startswith("Having thought it over")
    if up == "lms":
        # LM Studio's /api/v1/chat carries no client tools (its tools are its own
        # integrations): the tools are dropped, the flow says so, and the answer is text.
        assert loop["steps"] == 1 and loop["text"].startswith("This protocol carries no")
        assert run["calls"] == []
    else:
        assert run["calls"] and all(c["location"] for c in run["calls"])  # the tool ran
        assert loop["steps"] == 2 and loop["text"].startswith("Thanks. get_weather returned")
        assert len(run["calls"]) == 1
    # Every step of the loop refers back to the first turn's reasoning and text.
    assert [len(references(b)) for b in bodies] == [0] + [2] * loop["steps"]


def upstream_bodies(running: Running, upstream: str | None = None) -> list[dict[str, Any]]:
    """What ``running`` sent its upstream (``upstream``: only that one) for each Responses
    request whose input is a list, with the request the client sent it (``"client"``)."""
    auth = {"Authorization": f"Bearer {running.key}"}
    out = []
    with httpx.Client(base_url=running.url, headers=auth, timeout=10) as http:
        for flow in http.get("/admin/flows", params={"limit": 1000}).json()["flows"]:
            if upstream is not None and flow.get("upstream") != upstream:
                continue
            detail = http.get(f"/admin/flows/{flow['id']}").json()
            client = json.loads(base64.b64decode(detail["request"].get("body_b64") or "e30="))
            if not isinstance(client.get("input"), list):
                continue
            sent = json.loads(base64.b64decode(detail["upstream_request"]["body_b64"]))
            out.append({**sent, "client": client})
    return out


THOUGHT = "Having thought it over"  # demo-reasoning's answer, named by reference later


@pytest.mark.parametrize("up", [u for u in UPSTREAMS if u != "rpass"])
def test_the_referenced_items_reached_a_translated_upstream(
    runs: dict[str, Any], proxies: tuple[Running, Running], up: str
) -> None:
    front, _ = proxies
    looped = [b for b in upstream_bodies(front, up) if references(b["client"])]
    assert len(looped) == runs[up]["turns"][1]["steps"]
    for sent in looped:
        text = json.dumps({k: v for k, v in sent.items() if k != "client"})
        assert THOUGHT in text and "item_reference" not in text


def test_a_responses_upstream_in_passthrough_got_its_own_ids_back(
    runs: dict[str, Any], proxies: tuple[Running, Running]
) -> None:
    """The references Cherry Studio sent over ``rpass`` name the second proxy's items: the
    first proxy sent them on as they were, and the second resolved them itself."""
    front, back = proxies
    sent = {ref for body in runs["rpass"]["bodies"] for ref in references(body)}
    forwarded = [b for b in upstream_bodies(front, "rpass") if references(b["client"])]
    assert forwarded and all(set(references(b)) == set(references(b["client"])) for b in forwarded)
    resolved = [b for b in upstream_bodies(back) if set(references(b["client"])) & sent]
    assert len(resolved) == len(forwarded)
    assert all(THOUGHT in json.dumps(b["input"]) for b in resolved)  # by the second proxy


def test_over_lm_studio_the_flow_says_the_tools_were_dropped(
    runs: dict[str, Any], proxies: tuple[Running, Running]
) -> None:
    front, _ = proxies
    auth = {"Authorization": f"Bearer {front.key}"}
    with httpx.Client(base_url=front.url, headers=auth, timeout=10) as http:
        flows = [f for f in http.get("/admin/flows").json()["flows"] if f.get("upstream") == "lms"]
        notes = [
            n
            for f in flows
            for n in http.get(f"/admin/flows/{f['id']}").json()["request_notes"]
            if n["field"] == "tools"
        ]
    assert runs["lms"]["calls"] == [] and notes
    assert all(n["action"] == "dropped" and "no client tools" in n["why"] for n in notes)
