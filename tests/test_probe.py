"""``streamscope probe``: one request to a real endpoint (the proxy with its demo
backend, on a real port), its frames as they arrive, the answer, timing and lint."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest

from streamscope.cli import main
from tests.proxy.demo_support import demo_config
from tests.proxy.harness import KEY, Running, make_config, proxied

BASE = {"openai-chat": "/v1", "responses": "/v1", "anthropic": "", "lmstudio": ""}


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
    assert "timing: headers" in out and "first content" in out
    assert "ok: nothing in this stream is known to break" in out


def test_probe_json_is_one_document(running: Running, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_probe(running, "anthropic", "demo-reasoning", "--json")) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == 200 and doc["frames"][0]["event"] == "message_start"
    choice = doc["response"]["choices"][0]
    assert [p["kind"] for p in choice["parts"]] == ["reasoning", "text"]
    assert doc["timing"]["first_reasoning_ms"] <= doc["timing"]["first_content_ms"]
    assert "cherry" in doc["lint"]["verdicts"]


def test_probe_of_a_broken_stream_names_who_breaks(capsys: pytest.CaptureFixture[str]) -> None:
    upstream = {"name": "demo", "kind": "demo", "default": True, "mode": "passthrough"}
    with proxied(make_config([upstream], keepalive_seconds=2.0)) as running:
        argv = _probe(running, "responses", "replay/broken/responses-no-item-id")
        assert main(argv) == 1
    out = capsys.readouterr().out
    assert "responses.missing-item-id" in out
    assert "would render empty in Cherry Studio" in out


def test_probe_of_an_error_is_exit_1(running: Running, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_probe(running, "openai-chat", "demo-error")) == 1
    assert "error: demo-error" in capsys.readouterr().out
    assert main([*_probe(running, "openai-chat", "demo-chat")[:-2], "--key", "sk-wrong"]) == 1
    assert "HTTP 401" in capsys.readouterr().out


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
