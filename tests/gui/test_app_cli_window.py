"""``streamscope`` with no sub-command opens the window with the proxy inside it (here
offscreen, in a real process): the proxy answers on the port chosen, the key is the
config's, a signal closes the window cleanly; with no display it says what to do."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import httpx
import pytest


def _window(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "streamscope", "--config", str(tmp_path / "c.toml"), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        umask=0o002,  # a permissive one: the files stay private all the same
    )


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_streamscope_opens_the_window_with_the_proxy(tmp_path: Path, stop: int) -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "STREAMSCOPE_DATA_DIR": str(tmp_path)}
    proc = _window(tmp_path, env, "--port", "0")
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("StreamScope window: proxy on http://127.0.0.1:"), first
        url = first.split("proxy on ")[1].split()[0]
        key = proc.stdout.readline().rsplit(" ", 1)[-1].strip()  # generated, saved
        assert key and key in (tmp_path / "c.toml").read_text()
        r = httpx.get(url + "/v1/models", headers={"authorization": f"Bearer {key}"})
        assert r.status_code == 200 and "demo-chat" in r.text
        proc.send_signal(stop)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert (tmp_path / "window.ini").is_file()  # the state was saved on the way out
    # Private: the data dir, the window's state, the capture, the config with its key.
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o700
    written = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir() if p.is_file()}
    assert {"window.ini", "flows.sqlite3", "c.toml", "c.pool.sqlite3"} <= set(written)
    assert {name: m for name, m in written.items() if m & 0o077} == {}


def test_without_a_display_it_points_at_serve(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.pop("QT_QPA_PLATFORM", None)
    proc = _window(tmp_path, env)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 2
    assert "no display" in err and "streamscope serve" in err and "Traceback" not in err
