"""``streamscope probe``: one request to a real endpoint (the proxy with its demo
backend, on a real port), its frames as they arrive, the answer, timing and lint."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from streamscope.cli import main
from tests.proxy.demo_support import demo_config
from tests.proxy.harness import KEY, Running, make_config, proxied

BASE = {"openai-chat": "/v1", "responses": "/v1", "anthropic": "", "lmstudio": "", "gemini": ""}


@pytest.fixture(scope="module")
def running() -> Iterator[Running]:
    with proxied(demo_config()) as running:
        yield running


def _probe(running: Running, protocol: str, model: str, *extra: str) -> list[str]:
    url = running.url + BASE[protocol]
    return ["probe", "--url", url, "--protocol", protocol, "--model", model, "--key", KEY, *extra]


@pytest.mark.parametrize("protocol", list(BASE))
def test_probe_shows_frames_answer_timing_and_verdicts(
    running: Running, protocol: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_probe(running, protocol, "demo-chat", "--prompt", "ping")) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("#0 ") and " ms " in lines[0]
    assert 'text: You said: "ping". This is the StreamScope demo backend.' in out
    assert "timing: headers" in out and "TTFT" in out and "first text" in out
    assert "ok: nothing in this stream is known to break" in out


def test_probe_json_is_one_document(running: Running, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_probe(running, "anthropic", "demo-reasoning", "--json")) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == 200 and doc["frames"][0]["event"] == "message_start"
    choice = doc["response"]["choices"][0]
    assert [p["kind"] for p in choice["parts"]] == ["reasoning", "text"]
    assert doc["timing"]["first_reasoning_ms"] <= doc["timing"]["first_content_ms"]
    assert "cherry-anthropic" in doc["lint"]["verdicts"]


def test_probe_of_a_broken_stream_names_who_breaks(capsys: pytest.CaptureFixture[str]) -> None:
    upstream = {"name": "demo", "protocol": "demo", "default": True, "mode": "passthrough"}
    with proxied(make_config([upstream], keepalive_seconds=2.0)) as running:
        argv = _probe(running, "responses", "replay/broken/responses-no-item-id")
        assert main(argv) == 1
    out = capsys.readouterr().out
    assert "responses.missing-item-id" in out
    assert "would fail in Cherry Studio" in out


def test_probe_of_an_error_is_exit_1(running: Running, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_probe(running, "openai-chat", "demo-error")) == 1
    assert "error: demo-error" in capsys.readouterr().out
    assert main([*_probe(running, "openai-chat", "demo-chat")[:-2], "--key", "sk-wrong"]) == 1
    assert "HTTP 401" in capsys.readouterr().out


def test_probe_of_a_gemini_model_the_target_lacks_prints_googles_envelope(
    running: Running, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _probe(running, "gemini", "no-such-model")
    argv[2] = running.url + "/v1beta"  # Google's base URL form: the version is not doubled
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert f"POST {running.url}/v1beta/models/no-such-model:streamGenerateContent?alt=sse" in out
    assert "-> HTTP 404" in out and '"status":"NOT_FOUND"' in out


def test_probe_of_nothing_listening_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        argv = ["probe", "--url", f"http://127.0.0.1:{port}/v1", "--protocol", "openai-chat"]
        assert main([*argv, "--model", "m"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("streamscope: error: cannot reach") and len(err.splitlines()) == 1


def test_probe_prints_what_each_frame_adds_not_the_json_start(
    running: Running, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_probe(running, "openai-chat", "demo-chat", "--prompt", "ping")) == 0
    frames = [line for line in capsys.readouterr().out.splitlines() if line.startswith("#")]
    assert frames and not any('{"id"' in line for line in frames)
    assert "role: assistant" in frames[0]
    assert any(line.endswith("finish: stop") for line in frames)
    assert frames[-1].endswith("[DONE]")
    # The text the deltas add, piece by piece, is on the frame lines.
    assert any(" ping" in line or "ping" in line.split("  ")[-1] for line in frames)


def leaks_none(text: str) -> bool:
    """Whether a Python ``None`` shows in CLI output."""
    return "None" in text


class _NotFound(BaseHTTPRequestHandler):
    """A server that knows no path: 404 with no body and no content type."""

    def _answer(self) -> None:
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def not_found_server() -> Iterator[str]:
    """A real local HTTP server that answers 404 to everything; yields its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotFound)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("protocol", list(BASE))
def test_probe_of_a_404_prints_no_none(protocol: str, capsys: pytest.CaptureFixture[str]) -> None:
    with not_found_server() as url:
        argv = ["probe", "--url", url + BASE[protocol], "--protocol", protocol, "--model", "m"]
        assert main(argv) == 1
        out, err = capsys.readouterr()
        assert "HTTP 404" in out
        assert not leaks_none(out + err)
        # one line for the error answer, not "ok: nothing … known to break" per client
        assert "known to break" not in out and "ok:" not in out
        assert out.count("an error answer (HTTP 404)") == 1
        assert main([*argv, "--json"]) == 1
        assert not leaks_none("".join(capsys.readouterr()))


@pytest.mark.parametrize("protocol", list(BASE))
def test_probe_of_the_proxys_404_prints_no_none(
    running: Running, protocol: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _probe(running, protocol, "demo-chat")
    argv[2] = running.url + "/nowhere"  # the base URL lands on no endpoint
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert "HTTP 404" in out and "no endpoint" in out
    assert not leaks_none(out + err)
    assert "timing: headers" in out and "no token count" in out
