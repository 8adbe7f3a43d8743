"""Routing (rules in streamscope/proxy/routing.py):

1. an alias from ``[aliases]``; 2. ``upstream/model`` only when the first segment names an
upstream (the upstream gets the model without the prefix); 3. a bare model in an upstream's
list, configured or fetched from its models endpoint and cached for
``models_ttl_seconds``; 4. the ``default = true`` upstream with the model unchanged;
5. else 404 ``model_not_found``. ``/v1/models`` lists upstream models and aliases,
de-duplicated, in OpenAI's shape or (``anthropic-version`` sent) Anthropic's.

Every outcome is checked by what the real upstream server recorded: the path it was
asked on (each upstream has its own base path) and the model in the JSON body. Config
validation (names, defaults, base_url, unknown keys) is checked through ``parse_config``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest

from streamscope.config import OLD_KIND, ConfigError, parse_config
from streamscope.translation.offline import translate_frames
from streamscope.wire import SSEDecoder
from tests.proxy.harness import Running, make_config, proxied
from tests.upstream_server import (
    RecordedRequest,
    Script,
    UpstreamServer,
    fast_stream_script,
    fast_stream_text,
    run_in_thread,
)

TEXT = fast_stream_text(2)
CHAT_PATH = {
    "openai": "/chat/completions",
    "responses": "/responses",
    "anthropic": "/v1/messages",
    "lmstudio": "/api/v1/chat",
}
MODELS_PATH = {
    "openai": "/models",
    "responses": "/models",
    "anthropic": "/v1/models",
    "lmstudio": "/api/v1/models",
}


def _translated(target: str) -> Script:
    decoder = SSEDecoder()
    frames = [
        f for c in fast_stream_script(2).chunks if isinstance(c, bytes) for f in decoder.feed(c, 0)
    ]
    out, _ = translate_frames(frames + decoder.flush(), "openai-chat", target)
    return Script(chunks=list(out))


STREAMS = {
    "openai": fast_stream_script(2),
    "anthropic": fast_stream_script(2, "anthropic"),
    "responses": _translated("responses"),
    "lmstudio": _translated("lmstudio"),
}


def models_body(kind: str, ids: list[str]) -> dict[str, Any]:
    """A models-list body as each kind's real endpoint writes it."""
    if kind == "lmstudio":
        return {
            "models": [
                {"type": "llm", "publisher": k.split("/")[0], "key": k, "display_name": k}
                for k in ids
            ]
        }
    if kind == "anthropic":
        data = [
            {"type": "model", "id": i, "display_name": i, "created_at": "2025-01-01T00:00:00Z"}
            for i in ids
        ]
        return {"data": data, "has_more": False, "first_id": ids[0], "last_id": ids[-1]}
    return {
        "object": "list",
        "data": [{"id": i, "object": "model", "created": 0, "owned_by": "x"} for i in ids],
    }


def base_url(up: UpstreamServer, name: str, kind: str) -> str:
    """Each upstream lives under its own path prefix on the one test server; OpenAI and
    Responses base URLs include /v1 like their SDKs' do."""
    return up.url + f"/{name}" + ("/v1" if kind in ("openai", "responses") else "")


def serve(
    up: UpstreamServer,
    name: str,
    kind: str,
    fetched: list[str] | None = None,
    models_status: int = 200,
) -> None:
    prefix = base_url(up, name, kind)[len(up.url) :]
    up.route("POST", prefix + CHAT_PATH[kind], STREAMS[kind])
    if fetched is not None:
        body = models_body(kind, fetched) if models_status == 200 else {"error": "down"}
        up.route("GET", prefix + MODELS_PATH[kind], Script(models_status, body_json=body))


def table(up: UpstreamServer, name: str, kind: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "protocol": OLD_KIND.get(kind, kind),
        "base_url": base_url(up, name, kind),
        "accounts": [{"name": "main", "api_key": f"sk-up-{name}"}],
        **extra,
    }


# The shared routing setup. Upstreams in config order:
#   oa    openai     configured ["gpt-4o", "deepseek-ai/DeepSeek-V3", "shadowed", "dup-model"]
#   an    anthropic  configured ["claude-x"]
#   rs    responses  configured ["resp-model"]
#   fo    openai     fetched    GET /fo/v1/models      -> ["fetched-oa", "dup-model"]
#   fa    anthropic  fetched    GET /fa/v1/models      -> ["claude-fetched"]
#   lm    lmstudio   fetched    GET /lm/api/v1/models  -> ["qwen/qwen3-4b", "local-llm"]
#   dflt  openai     default    configured ["dup-model", "default-listed"]
ALIASES = {
    "my-alias": "an/claude-x",
    "bare-alias": "gpt-4o",
    "shadowed": "an/claude-x",
    "alias-to-nowhere": "vanished-model",
}
FETCHED = {
    "fo": ("openai", ["fetched-oa", "dup-model"]),
    "fa": ("anthropic", ["claude-fetched"]),
    "lm": ("lmstudio", ["qwen/qwen3-4b", "local-llm"]),
}


@pytest.fixture(scope="module")
def up() -> Iterator[UpstreamServer]:
    with run_in_thread() as server:
        yield server


@pytest.fixture(scope="module")
def proxy(up: UpstreamServer) -> Iterator[Running]:
    serve(up, "oa", "openai")
    serve(up, "an", "anthropic")
    serve(up, "rs", "responses")
    serve(up, "dflt", "openai")
    for name, (kind, ids) in FETCHED.items():
        serve(up, name, kind, fetched=ids)
    tables = [
        table(
            up,
            "oa",
            "openai",
            models=["gpt-4o", "deepseek-ai/DeepSeek-V3", "shadowed", "dup-model"],
        ),
        table(up, "an", "anthropic", models=["claude-x"]),
        table(up, "rs", "responses", models=["resp-model"]),
        *(table(up, name, kind, models_ttl_seconds=3600) for name, (kind, _) in FETCHED.items()),
        table(up, "dflt", "openai", default=True, models=["dup-model", "default-listed"]),
    ]
    config = make_config(tables)
    config.aliases = dict(ALIASES)
    with proxied(config) as running:
        yield running


@pytest.fixture(scope="module")
def http(proxy: Running) -> Iterator[httpx.Client]:
    headers = {"authorization": f"Bearer {proxy.key}"}
    with httpx.Client(base_url=proxy.url, timeout=20, headers=headers, trust_env=False) as c:
        yield c


def chat(http: httpx.Client, model: str) -> httpx.Response:
    return http.post(
        "/v1/chat/completions",
        json={"model": model, "messages": [{"role": "user", "content": "hi"}]},
    )


def routed(up: UpstreamServer, http: httpx.Client, model: str) -> RecordedRequest:
    """Send a chat request for ``model``; the one POST the upstream server got for it."""
    n = len(up.requests)
    r = chat(http, model)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["choices"][0]["message"]["content"] == TEXT
    posts = [q for q in up.requests[n:] if q.method == "POST"]
    assert len(posts) == 1, [q.path for q in posts]
    if posts[0].json["model"] != model:  # renamed by a prefix or an alias
        assert body["model"] == model  # the client sees the model it asked for
    return posts[0]


def model_fetches(up: UpstreamServer, name: str) -> int:
    kind = FETCHED[name][0] if name in FETCHED else "openai"
    path = base_url(up, name, kind)[len(up.url) :] + MODELS_PATH[kind]
    return sum(1 for q in up.requests if q.method == "GET" and q.path == path)


# -- upstream/model ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "path", "sent"),
    [
        ("an/claude-x", "/an/v1/messages", "claude-x"),
        ("an/claude-unlisted", "/an/v1/messages", "claude-unlisted"),
        ("oa/gpt-4o", "/oa/v1/chat/completions", "gpt-4o"),
        ("rs/resp-model", "/rs/v1/responses", "resp-model"),
        ("lm/qwen/qwen3-4b", "/lm/api/v1/chat", "qwen/qwen3-4b"),
        ("dflt/claude-x", "/dflt/v1/chat/completions", "claude-x"),
    ],
)
def test_upstream_prefix_routes_there_without_the_prefix(
    up: UpstreamServer, http: httpx.Client, model: str, path: str, sent: str
) -> None:
    req = routed(up, http, model)
    assert req.path == path
    assert req.json["model"] == sent


def test_upstream_gets_its_own_account_key(
    up: UpstreamServer, http: httpx.Client, proxy: Running
) -> None:
    req = routed(up, http, "an/claude-x")
    assert req.headers["x-api-key"] == "sk-up-an"
    assert req.headers["anthropic-version"]
    assert proxy.key not in str(req.headers)
    req = routed(up, http, "oa/gpt-4o")
    assert req.headers["authorization"] == "Bearer sk-up-oa"


# -- a slash that is not an upstream name ----------------------------------------------------


def test_slash_model_listed_by_an_upstream_goes_there_unchanged(
    up: UpstreamServer, http: httpx.Client
) -> None:
    req = routed(up, http, "deepseek-ai/DeepSeek-V3")
    assert (req.path, req.json["model"]) == ("/oa/v1/chat/completions", "deepseek-ai/DeepSeek-V3")


def test_slash_model_in_a_fetched_list_goes_there_unchanged(
    up: UpstreamServer, http: httpx.Client
) -> None:
    req = routed(up, http, "qwen/qwen3-4b")  # "qwen" is no upstream; lm's list has it
    assert (req.path, req.json["model"]) == ("/lm/api/v1/chat", "qwen/qwen3-4b")


def test_slash_model_unknown_goes_to_default_unchanged(
    up: UpstreamServer, http: httpx.Client
) -> None:
    req = routed(up, http, "meta-llama/Llama-3.3-70B")
    assert (req.path, req.json["model"]) == (
        "/dflt/v1/chat/completions",
        "meta-llama/Llama-3.3-70B",
    )


# -- bare models in lists --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "path"),
    [
        ("gpt-4o", "/oa/v1/chat/completions"),
        ("claude-x", "/an/v1/messages"),
        ("resp-model", "/rs/v1/responses"),
        ("default-listed", "/dflt/v1/chat/completions"),
        ("dup-model", "/oa/v1/chat/completions"),  # listed by oa, fo and dflt: first wins
    ],
)
def test_bare_model_in_a_configured_list(
    up: UpstreamServer, http: httpx.Client, model: str, path: str
) -> None:
    req = routed(up, http, model)
    assert (req.path, req.json["model"]) == (path, model)


@pytest.mark.parametrize(
    ("model", "path"),
    [
        ("fetched-oa", "/fo/v1/chat/completions"),
        ("claude-fetched", "/fa/v1/messages"),
        ("local-llm", "/lm/api/v1/chat"),
    ],
)
def test_bare_model_in_a_fetched_list(
    up: UpstreamServer, http: httpx.Client, model: str, path: str
) -> None:
    req = routed(up, http, model)
    assert (req.path, req.json["model"]) == (path, model)


def test_models_are_fetched_from_each_kinds_endpoint_with_its_auth(
    up: UpstreamServer, http: httpx.Client
) -> None:
    routed(up, http, "local-llm")  # resolving it asks fo, fa and lm for their lists
    gets = {q.path: q for q in up.requests if q.method == "GET"}
    assert gets["/fo/v1/models"].headers["authorization"] == "Bearer sk-up-fo"
    assert gets["/fa/v1/models"].headers["x-api-key"] == "sk-up-fa"
    assert gets["/fa/v1/models"].headers["anthropic-version"]
    assert gets["/lm/api/v1/models"].headers["authorization"] == "Bearer sk-up-lm"
    # Lists are cached (TTL 3600 here): however many routings, one fetch each.
    for model in ("fetched-oa", "claude-fetched", "local-llm", "unmatched-thing"):
        routed(up, http, model)
    assert [model_fetches(up, n) for n in FETCHED] == [1, 1, 1]


def test_configured_list_is_not_fetched(up: UpstreamServer, http: httpx.Client) -> None:
    routed(up, http, "unmatched-other")
    configured = ("/oa/v1/models", "/an/v1/models", "/rs/v1/models", "/dflt/v1/models")
    assert [q.path for q in up.requests if q.path in configured] == []


# -- model-list TTL ---------------------------------------------------------------------------


def _ttl_proxy(up: UpstreamServer, name: str, ttl: float, status: int = 200) -> Any:
    serve(up, name, "openai", fetched=[f"{name}-model"], models_status=status)
    serve(up, f"{name}-default", "openai")
    tables = [
        table(up, name, "openai", models_ttl_seconds=ttl),
        table(up, f"{name}-default", "openai", default=True, models=[]),
    ]
    return proxied(make_config(tables))


def _fetches(up: UpstreamServer, name: str) -> int:
    return sum(1 for q in up.requests if q.method == "GET" and q.path == f"/{name}/v1/models")


def _route_once(p: Running, up: UpstreamServer, model: str) -> str:
    n = len(up.requests)
    with httpx.Client(base_url=p.url, timeout=20, trust_env=False) as c:
        r = c.post(
            "/v1/chat/completions",
            headers={"x-api-key": p.key},
            json={"model": model, "messages": [{"role": "user", "content": "hi"}]},
        )
    assert r.status_code == 200, r.text
    posts = [q.path for q in up.requests[n:] if q.method == "POST"]
    assert len(posts) == 1
    return posts[0]


def test_fetched_list_is_cached_inside_the_ttl(up: UpstreamServer) -> None:
    with _ttl_proxy(up, "ttl-long", 3600) as p:
        assert _fetches(up, "ttl-long") == 0  # nothing fetched before it is needed
        for _ in range(3):
            assert _route_once(p, up, "ttl-long-model") == "/ttl-long/v1/chat/completions"
        assert _fetches(up, "ttl-long") == 1


def test_fetched_list_is_fetched_again_after_the_ttl(up: UpstreamServer) -> None:
    ttl = 0.2
    with _ttl_proxy(up, "ttl-short", ttl) as p:
        assert _route_once(p, up, "ttl-short-model") == "/ttl-short/v1/chat/completions"
        assert _fetches(up, "ttl-short") == 1
        time.sleep(ttl * 2.5)
        assert _route_once(p, up, "ttl-short-model") == "/ttl-short/v1/chat/completions"
        assert _fetches(up, "ttl-short") == 2


def test_failing_models_endpoint_falls_back_to_the_default(up: UpstreamServer) -> None:
    """A models endpoint that fails is not the client's problem: the request still goes
    to the default upstream."""
    with _ttl_proxy(up, "ttl-down", 3600, status=500) as p:
        for _ in range(2):
            assert _route_once(p, up, "ttl-down-model") == "/ttl-down-default/v1/chat/completions"
        assert _fetches(up, "ttl-down") >= 1


# -- aliases ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "path", "sent"),
    [
        ("my-alias", "/an/v1/messages", "claude-x"),  # alias -> upstream/model
        ("bare-alias", "/oa/v1/chat/completions", "gpt-4o"),  # alias -> a listed model
        ("shadowed", "/an/v1/messages", "claude-x"),  # alias wins over oa's list
        ("alias-to-nowhere", "/dflt/v1/chat/completions", "vanished-model"),
    ],
)
def test_alias(up: UpstreamServer, http: httpx.Client, model: str, path: str, sent: str) -> None:
    req = routed(up, http, model)
    assert (req.path, req.json["model"]) == (path, sent)


def test_alias_through_the_anthropic_sdk(up: UpstreamServer, proxy: Running) -> None:
    n = len(up.requests)
    with anthropic.Anthropic(api_key=proxy.key, base_url=proxy.url, max_retries=0) as client:
        message = client.messages.create(
            model="my-alias", max_tokens=32, messages=[{"role": "user", "content": "hi"}]
        )
    assert message.content[0].type == "text" and message.content[0].text == TEXT
    assert message.model == "my-alias"
    posts = [q for q in up.requests[n:] if q.method == "POST"]
    assert [(q.path, q.json["model"]) for q in posts] == [("/an/v1/messages", "claude-x")]


# -- default and no default --------------------------------------------------------------------


@pytest.mark.parametrize("model", ["mystery-model", "oa/", "nope/thing"])
def test_unmatched_goes_to_the_default_unchanged(
    up: UpstreamServer, http: httpx.Client, model: str
) -> None:
    req = routed(up, http, model)
    assert (req.path, req.json["model"]) == ("/dflt/v1/chat/completions", model)


def test_unmatched_without_default_is_404(up: UpstreamServer) -> None:
    serve(up, "solo", "openai")
    config = make_config([table(up, "solo", "openai", models=["solo-model"])])
    with proxied(config) as p, httpx.Client(base_url=p.url, timeout=20, trust_env=False) as c:
        n = len(up.requests)
        r = c.post(
            "/v1/chat/completions",
            headers={"x-api-key": p.key},
            json={"model": "mystery", "messages": [{"role": "user", "content": "hi"}]},
        )
        assert r.status_code == 404
        assert r.json()["error"]["code"] == "model_not_found"
        assert [q for q in up.requests[n:] if q.method == "POST"] == []
        r = c.post(
            "/v1/chat/completions",
            headers={"x-api-key": p.key},
            json={"model": "solo/anything", "messages": [{"role": "user", "content": "x"}]},
        )
        assert r.status_code == 200, r.text
        assert up.requests[-1].json["model"] == "anything"


# -- /v1/models ---------------------------------------------------------------------------------

ALL_IDS = [
    "gpt-4o",
    "deepseek-ai/DeepSeek-V3",
    "shadowed",
    "dup-model",
    "claude-x",
    "resp-model",
    "fetched-oa",
    "claude-fetched",
    "qwen/qwen3-4b",
    "local-llm",
    "default-listed",
    "my-alias",
    "bare-alias",
    "alias-to-nowhere",
]


def test_models_list_openai_shape_deduplicated_with_aliases(http: httpx.Client) -> None:
    r = http.get("/v1/models")
    assert r.status_code == 200
    body = r.json()
    assert body["object"] == "list"
    ids = [m["id"] for m in body["data"]]
    assert len(ids) == len(set(ids)), ids
    assert sorted(ids) == sorted(ALL_IDS)
    assert all(m["object"] == "model" for m in body["data"])
    owners = {m["id"]: m["owned_by"] for m in body["data"]}
    assert owners["dup-model"] == "oa"  # first upstream listing it
    assert owners["local-llm"] == "lm"
    assert owners["claude-fetched"] == "fa"


def test_models_list_anthropic_shape(http: httpx.Client) -> None:
    r = http.get("/v1/models", headers={"anthropic-version": "2023-06-01"})
    assert r.status_code == 200
    body = r.json()
    assert body["has_more"] is False
    assert all(m["type"] == "model" for m in body["data"])
    ids = [m["id"] for m in body["data"]]
    assert sorted(ids) == sorted(ALL_IDS)
    assert body["first_id"] == ids[0] and body["last_id"] == ids[-1]


def test_models_list_through_both_sdks(proxy: Running) -> None:
    with openai.OpenAI(api_key=proxy.key, base_url=proxy.v1, max_retries=0) as o:
        assert sorted(m.id for m in o.models.list()) == sorted(ALL_IDS)
    with anthropic.Anthropic(api_key=proxy.key, base_url=proxy.url, max_retries=0) as a:
        page = a.models.list(limit=100)
        assert sorted(m.id for m in page.data) == sorted(ALL_IDS)
        assert page.has_more is False


# -- config validation -----------------------------------------------------------------------

GOOD = """
[proxy]
api_keys = ["sk-local-abc"]

[[upstreams]]
name = "deepseek"
protocol = "openai-chat"
base_url = "https://api.deepseek.com/v1/"
default = true
models = ["deepseek-chat"]

[[upstreams.accounts]]
name = "main"
api_key = "sk-secret"

[[upstreams]]
name = "local"
protocol = "demo"

[aliases]
"claude-sonnet-4-6" = "deepseek/deepseek-chat"
"""


def test_good_config_parses() -> None:
    config = parse_config(GOOD)
    assert [u.name for u in config.upstreams] == ["deepseek", "local"]
    assert config.upstreams[0].base_url == "https://api.deepseek.com/v1"
    assert config.aliases == {"claude-sonnet-4-6": "deepseek/deepseek-chat"}


UPSTREAM_A = '[[upstreams]]\nname = "a"\nprotocol = "demo"\n'
BAD_CONFIGS = {
    "duplicate-names": (UPSTREAM_A + UPSTREAM_A, ["unique", "a"]),
    "two-defaults": (
        UPSTREAM_A + "default = true\n" + '[[upstreams]]\nname = "b"\nprotocol = "demo"\n'
        "default = true\n",
        ["default"],
    ),
    "no-base-url": (
        '[[upstreams]]\nname = "x"\nprotocol = "openai-chat"\n',
        ["upstreams[0]", "base_url"],
    ),
    "anthropic-no-base-url": (
        UPSTREAM_A + '[[upstreams]]\nname = "y"\nprotocol = "anthropic"\n',
        ["upstreams[1]", "base_url"],
    ),
    "unknown-upstream-key": (UPSTREAM_A + "modles = []\n", ["upstreams[0].modles"]),
    "unknown-proxy-key": ("[proxy]\nkeepalive = 5\n", ["proxy.keepalive"]),
    "unknown-table": ('[alias]\n"x" = "y"\n', ["alias"]),
    "unknown-account-key": (
        UPSTREAM_A + '[[upstreams.accounts]]\nkey = "k"\n',
        ["upstreams[0].accounts[0].key"],
    ),
    "bad-protocol": (
        '[[upstreams]]\nname = "g"\nprotocol = "bedrock"\nbase_url = "http://x"\n',
        ["upstreams[0].protocol"],
    ),
    "bad-port": ('[proxy]\nport = "eighty"\n', ["proxy.port"]),
    "not-toml": ("[proxy\n", ["TOML"]),
}


@pytest.mark.parametrize("case", list(BAD_CONFIGS))
def test_bad_config_names_the_key(case: str) -> None:
    text, needles = BAD_CONFIGS[case]
    with pytest.raises(ConfigError) as exc:
        parse_config(text, "my.toml")
    message = str(exc.value)
    assert message.startswith("my.toml")
    for needle in needles:
        assert needle in message, (needle, message)


def test_config_error_never_shows_secrets() -> None:
    text = GOOD.replace('protocol = "demo"', 'protocol = "demo"\nbogus = 1')
    with pytest.raises(ConfigError) as exc:
        parse_config(text, "my.toml")
    assert "upstreams[1].bogus" in str(exc.value)
    assert "sk-secret" not in str(exc.value) and "sk-local-abc" not in str(exc.value)
