"""The proxy runs as a task on the GUI's qasync loop, and headless from the CLI."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from streamscope.proxy.server import PortInUse, ProxyServer
from streamscope.wire import SSEDecoder
from tests.proxy.harness import KEY, make_config


@pytest.mark.qasync
async def test_proxy_serves_as_a_task_on_a_qasync_loop() -> None:
    import qasync
    from PySide6.QtCore import QTimer

    assert isinstance(asyncio.get_running_loop(), qasync.QEventLoop)
    before = signal.getsignal(signal.SIGINT)
    server = ProxyServer(make_config([{"name": "demo", "protocol": "demo", "default": True}]))
    await server.start()
    ticks = 0

    def tick() -> None:
        nonlocal ticks
        ticks += 1

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(5)
    try:
        # The embedded server leaves the GUI's Ctrl-C handling alone.
        assert signal.getsignal(signal.SIGINT) is before
        body = {
            "model": "demo-chat",
            "stream": True,
            "messages": [{"role": "user", "content": "from the GUI loop"}],
        }
        decoder = SSEDecoder()
        frames = []
        async with httpx.AsyncClient() as client:
            async with client.stream(
                "POST",
                f"{server.url}/v1/chat/completions",
                json=body,
                headers={"authorization": f"Bearer {KEY}"},
            ) as response:
                assert response.status_code == 200
                async for chunk in response.aiter_raw():
                    frames += decoder.feed(chunk)
        text = "".join(
            (json.loads(f.data)["choices"] or [{}])[0].get("delta", {}).get("content") or ""
            for f in frames
            if f.data and f.data != "[DONE]"
        )
        assert '"from the GUI loop"' in text
        assert frames[-1].data == "[DONE]"
        # Qt kept running its own timers while the proxy streamed on the same loop.
        assert ticks > 0
    finally:
        timer.stop()
        await server.stop()


async def test_port_in_use_is_a_clear_error() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = ProxyServer(make_config([], port=port))
        with pytest.raises(PortInUse, match=f"127.0.0.1:{port}"):
            await server.start()


def _serve(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "streamscope", "serve", "--config", str(tmp_path / "c.toml"), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_serve_generates_a_key_logs_requests_and_stops_on_sigint(tmp_path: Path) -> None:
    proc = _serve(tmp_path, "--port", "0")
    try:
        assert proc.stdout is not None
        # the generated key first: said before the port is tried (a taken one still saved it)
        key_line = proc.stdout.readline()
        assert key_line.startswith("Generated a local API key"), key_line
        key = key_line.rsplit(" ", 1)[1].strip()
        first = proc.stdout.readline()
        assert "listening on http://127.0.0.1:" in first, first
        url = first.split("listening on ")[1].split()[0]
        assert key.startswith("sk-local-") and len(key) == len("sk-local-") + 32
        assert key in (tmp_path / "c.toml").read_text()  # saved
        # The first run says how to try the demo backend (the default upstream). Read
        # with readline: communicate() would miss lines its buffer already holds.
        hint = "".join(proc.stdout.readline() for _ in range(3))
        assert "Demo models (no key or network needed): demo-chat, demo-tools" in hint
        assert "curl -N " + url + "/v1/chat/completions" in hint
        r = httpx.post(
            f"{url}/v1/chat/completions",
            json={"model": "demo-chat", "messages": [{"role": "user", "content": "hi"}]},
            headers={"authorization": f"Bearer {key}"},
            timeout=10,
        )
        assert r.status_code == 200 and "hi" in r.json()["choices"][0]["message"]["content"]
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    log = [line for line in err.splitlines() if "POST /v1/chat/completions" in line]
    assert len(log) == 1
    for field in ("model=demo-chat", "upstream=demo", "status=200", "ttft=", "duration="):
        assert field in log[0]
    assert key not in err and key not in out  # the key is printed once, on stdout, at creation


def test_serve_with_a_taken_port_says_so(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        proc = _serve(tmp_path, "--port", str(taken.getsockname()[1]))
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 2
    assert "cannot listen on 127.0.0.1" in err and "--port" in err
    assert "Traceback" not in err


def test_serve_with_a_bad_config_names_the_key(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text('[proxy]\nport = "eighty"\n')
    proc = _serve(tmp_path)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 2
    assert "proxy.port" in err and "Traceback" not in err
