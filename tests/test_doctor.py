"""``streamscope doctor``: the config, the port, the upstreams and the accounts, checked
against real sockets (a scripted loopback upstream, a real proxy, a plain listener)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from streamscope.cli import main
from tests.proxy.harness import KEY, make_config, proxied
from tests.upstream_server import RecordedRequest, Script, UpstreamServer, run_in_thread

GOOD = "sk-good-0000000000000000000000000000aaaa"
BAD = "sk-bad-00000000000000000000000000000bbbb"
LIMITED = "sk-limited-0000000000000000000000000cccc"
MODELS = {"object": "list", "data": [{"id": "m1", "object": "model"}, {"id": "m2"}]}
LMSTUDIO_MODELS = {"models": [{"key": "qwen"}, {"key": "gemma"}]}


def _config(tmp_path: Path, text: str, port: int = 0) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(f'[proxy]\nhost = "127.0.0.1"\nport = {port}\n{text}', encoding="utf-8")
    return path


def _upstream(url: str, *keys: str, protocol: str = "openai-chat", extra: str = "") -> str:
    base = url + "/v1" if protocol in ("openai-chat", "responses") else url
    text = f'[[upstreams]]\nname = "up"\nprotocol = "{protocol}"\nbase_url = "{base}"\n{extra}'
    for n, key in enumerate(keys):
        text += f'[[upstreams.accounts]]\nname = "{["good", "bad", "limited"][n]}"\n'
        text += f'api_key = "{key}"\n'
    return text


def _doctor(capsys: pytest.CaptureFixture[str], path: Path, *args: str) -> tuple[int, str]:
    code = main(["doctor", "--config", str(path), *args])
    out, err = capsys.readouterr()
    assert err == ""  # never a traceback
    return code, out


def _line(out: str, start: str) -> str:
    return next(line for line in out.splitlines() if line.startswith(start))


def _fix_after(out: str, start: str) -> str:
    lines = out.splitlines()
    i = lines.index(_line(out, start))
    assert lines[i + 1].lstrip().startswith("fix: ")
    return lines[i + 1].strip()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def upstream() -> Iterator[UpstreamServer]:
    with run_in_thread() as server:
        yield server


# -- config -------------------------------------------------------------------------------


def test_a_missing_config_is_ok_with_the_demo_defaults_and_stays_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "none.toml"
    code, out = _doctor(capsys, path, "--port", "0")
    assert code == 0
    assert f"no config file at {path}; defaults are used: the demo upstream" in _line(out, "ok ")
    assert "built in (demo)" in _line(out, "ok    upstream demo")
    assert "no local API key" in _line(out, "warn  key")
    assert out.splitlines()[-1].endswith("0 failed, 1 skipped")
    assert not path.exists()  # doctor never writes the config (no generated key)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("[proxy\nport = 1\n", "not valid TOML"),
        ('[proxy]\nport = "eighty"\n', "proxy.port: Input should be a valid integer"),
        ('[[upstreams]]\nname = "x"\nprotocol = "openai-chat"\n', "base_url is required"),
    ],
)
def test_a_broken_config_is_a_failed_check_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, error: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    code, out = _doctor(capsys, path)
    assert code == 1
    assert _line(out, "FAIL  config").count(error) == 1
    assert str(path) in _fix_after(out, "FAIL  config")
    assert out.splitlines()[-1] == "0 ok, 0 warnings, 1 failed"
    assert path.read_text(encoding="utf-8") == text


# -- port ---------------------------------------------------------------------------------


def test_a_free_port_is_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    port = _free_port()
    code, out = _doctor(capsys, _config(tmp_path, "", port))
    assert code == 0
    assert _line(out, "ok    port").endswith(f"127.0.0.1:{port} is free")


def test_a_port_held_by_another_program_fails_with_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as other:
        other.bind(("127.0.0.1", 0))
        other.listen()  # accepts, never answers
        port = other.getsockname()[1]
        code, out = _doctor(capsys, _config(tmp_path, ""), "--port", str(port), "--timeout", "1")
    assert code == 1
    assert _line(out, "FAIL  port").endswith(f"port 127.0.0.1:{port} is taken by another program")
    assert _fix_after(out, "FAIL  port") == (
        "fix: choose another with --port or set [proxy] port in the config"
    )


def test_a_running_streamscope_proxy_on_the_port_is_recognised(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    demo = {"name": "demo", "protocol": "demo", "default": True}
    with proxied(make_config([demo])) as running:
        port = running.server.port
        path = _config(tmp_path, f'api_keys = ["{KEY}"]\n', port)
        code, out = _doctor(capsys, path)
        assert code == 0  # a warning: the user may mean to use that one
        line = _line(out, "warn  port")
        assert f"StreamScope is already running on port {port} (127.0.0.1)" in line
        assert "it takes this config's local key" in line
        assert "--port" in _fix_after(out, "warn  port")

        other = tmp_path / "other.toml"
        other.write_text(f'[proxy]\nport = {port}\napi_keys = ["sk-local-another-one"]\n')
        code, out = _doctor(capsys, other)
        assert code == 0
        assert "with other local keys than this config's" in _line(out, "warn  port")
    assert KEY not in out


def test_a_port_override_is_checked_and_the_config_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _config(tmp_path, "", 1)
    before = path.read_text(encoding="utf-8")
    port = _free_port()
    code, out = _doctor(capsys, path, "--host", "127.0.0.1", "--port", str(port))
    assert code == 0 and f"127.0.0.1:{port} is free" in out
    assert path.read_text(encoding="utf-8") == before


# -- upstreams ----------------------------------------------------------------------------


def test_an_upstream_at_a_closed_port_is_unreachable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{_free_port()}"
    code, out = _doctor(capsys, _config(tmp_path, _upstream(url, GOOD)))
    assert code == 1
    line = _line(out, "FAIL  upstream up")
    assert f"unreachable: GET {url}/v1/models: connection refused" in line
    assert _fix_after(out, "FAIL  upstream up") == (
        f"fix: is the server running? is base_url right ({url}/v1)?"
    )


@pytest.mark.parametrize(
    ("protocol", "path", "listing", "auth"),
    [
        ("openai-chat", "/v1/models", MODELS, ("authorization", f"Bearer {GOOD}")),
        ("anthropic", "/v1/models", MODELS, ("x-api-key", GOOD)),
        ("lmstudio", "/api/v1/models", LMSTUDIO_MODELS, ("authorization", f"Bearer {GOOD}")),
    ],
)
def test_an_upstream_listing_models_is_ok_with_the_count(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    upstream: UpstreamServer,
    protocol: str,
    path: str,
    listing: dict[str, object],
    auth: tuple[str, str],
) -> None:
    upstream.route("GET", path, Script(body_json=listing))
    code, out = _doctor(capsys, _config(tmp_path, _upstream(upstream.url, GOOD, protocol=protocol)))
    assert code == 0
    line = _line(out, "ok    upstream up")
    assert f"reachable: GET {upstream.url}{path} with account good (…aaaa) -> 200: 2 models" in line
    (request,) = upstream.requests  # the proxy's own URL and auth for that protocol
    assert request.headers[auth[0]] == auth[1]


def test_an_upstream_rejecting_the_key_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], upstream: UpstreamServer
) -> None:
    upstream.route("GET", "/v1/models", Script(401, body_json={"error": {"message": "no"}}))
    code, out = _doctor(capsys, _config(tmp_path, _upstream(upstream.url, BAD)))
    assert code == 1
    assert "reachable, but the key was rejected" in _line(out, "FAIL  upstream up")
    assert "check the api_key of account good" in _fix_after(out, "FAIL  upstream up")


def test_an_upstream_answering_404_is_a_warning_about_base_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], upstream: UpstreamServer
) -> None:
    code, out = _doctor(capsys, _config(tmp_path, _upstream(upstream.url, GOOD)))
    assert code == 0
    assert "-> 404: no route for GET /v1/models" in _line(out, "warn  upstream up")
    assert f"check base_url ({upstream.url}/v1)" in _fix_after(out, "warn  upstream up")


# -- accounts -----------------------------------------------------------------------------


def _chat(request: RecordedRequest) -> Script:
    key = request.headers.get("authorization", "").removeprefix("Bearer ")
    if key == GOOD:
        answer = {
            "id": "c1",
            "object": "chat.completion",
            "model": "m1",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "p"}}],
        }
        return Script(body_json=answer)
    if key == LIMITED:
        error = {"error": {"message": "Rate limit reached", "type": "rate_limit"}}
        return Script(429, headers={"retry-after": "30"}, body_json=error)
    error = {"error": {"message": f"Incorrect API key provided: {key}", "type": "auth"}}
    return Script(401, body_json=error)


def test_accounts_get_one_tiny_request_each_classified_by_the_pool_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], upstream: UpstreamServer
) -> None:
    upstream.route("GET", "/v1/models", Script(body_json=MODELS))
    upstream.route("POST", "/v1/chat/completions", _chat)
    path = _config(tmp_path, _upstream(upstream.url, GOOD, BAD, LIMITED))
    code, out = _doctor(capsys, path, "--accounts")
    assert code == 1
    assert _line(out, "ok    account up/good").endswith("accepted: m1 answered (HTTP 200)")
    bad = _line(out, "FAIL  account up/bad")
    assert "invalid_credential (401): Incorrect API key provided: …bbbb" in bad
    assert bad.endswith("-> the pool would disable it until someone enables it")
    assert _fix_after(out, "FAIL  account up/bad") == "fix: check the account's api_key"
    limited = _line(out, "warn  account up/limited")
    assert "exhausted (429): Rate limit reached -> the pool would cool it for 30 s" in limited

    posts = [r for r in upstream.requests if r.method == "POST"]
    sent = sorted(r.headers["authorization"].removeprefix("Bearer ") for r in posts)
    assert sent == sorted([GOOD, BAD, LIMITED])  # exactly one request per account
    for r in posts:
        assert r.json["max_tokens"] == 1 and r.json["model"] == "m1"
        assert r.json["messages"] == [{"role": "user", "content": "ping"}]
        assert r.json.get("stream") in (None, False)
    for secret in (GOOD, BAD, LIMITED):
        assert secret not in out


def test_accounts_use_the_configured_model_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], upstream: UpstreamServer
) -> None:
    upstream.route("GET", "/v1/models", Script(body_json=MODELS))
    upstream.route("POST", "/v1/chat/completions", _chat)
    text = _upstream(upstream.url, GOOD, extra='models = ["mine"]\n')
    code, out = _doctor(capsys, _config(tmp_path, text), "--accounts")
    assert code == 0 and "accepted: mine answered" in out
    assert [r.json["model"] for r in upstream.requests if r.method == "POST"] == ["mine"]


def test_without_accounts_no_request_with_a_body_reaches_the_upstream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], upstream: UpstreamServer
) -> None:
    upstream.route("GET", "/v1/models", Script(body_json=MODELS))
    upstream.route("POST", "/v1/chat/completions", _chat)
    code, out = _doctor(capsys, _config(tmp_path, _upstream(upstream.url, GOOD, BAD)))
    assert code == 0
    assert [(r.method, r.body) for r in upstream.requests] == [("GET", b"")]
    skipped = _line(out, "skip  accounts")
    assert "2 accounts not checked: opt in with --accounts" in skipped
    assert "spends a token each" in skipped


def test_secrets_never_show_in_text_or_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], upstream: UpstreamServer
) -> None:
    echo = {"error": {"message": f"Incorrect API key provided: {BAD}"}}
    upstream.route("GET", "/v1/models", Script(401, body_json=echo))
    upstream.route("POST", "/v1/chat/completions", _chat)
    text = _upstream(upstream.url, BAD, extra='models = ["m1"]\n')
    path = _config(tmp_path, f'api_keys = ["{KEY}"]\n{text}')
    code, out = _doctor(capsys, path, "--accounts")
    assert code == 1 and "…bbbb" in out
    code, doc_text = _doctor(capsys, path, "--accounts", "--json")
    assert code == 1
    doc = json.loads(doc_text)
    assert doc["ok"] is False
    assert {c["status"] for c in doc["checks"]} >= {"ok", "fail"}
    assert set(doc["checks"][0]) == {"name", "status", "detail", "fix"}
    for secret in (BAD, KEY):
        assert secret not in out and secret not in doc_text


# -- the command ----------------------------------------------------------------------------


def test_json_is_one_document_and_ok_when_nothing_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _doctor(capsys, tmp_path / "none.toml", "--port", "0", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["ok"] is True
    assert [c["name"] for c in doc["checks"]] == [
        "config",
        "key",
        "port",
        "storage",
        "upstream demo",
        "accounts",
    ]
