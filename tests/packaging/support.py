"""Helpers for the packaging tests: a clean copy of the checkout, and a program's proxy
started with ``serve --port 0`` (or the window), asked for a demo answer over a socket."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import tomllib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
# What demo-chat says to "hi" (it quotes the user's last message back).
DEMO_ANSWER = 'You said: "hi". This is the StreamScope demo backend.'
LISTENING = re.compile(r"(?:listening on|proxy on) (http://127\.0\.0\.1:\d+)")


def clean_checkout(target: Path) -> Path:
    """The files git knows of (tracked, or new and not ignored), copied to ``target``:
    what a clean clone of this work tree holds, without build/, .venv/ or caches."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (n.decode() for n in listed)):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def isolated_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment with HOME and the XDG folders under ``home`` (the config, the
    pool state and the flow store land there, not in the user's), no STREAMSCOPE_CONFIG,
    and no PYTHONPATH (a checkout's ``app`` on it would stand in for what was installed)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("STREAMSCOPE_") and k not in ("PYTHONPATH", "PYTHONHOME")
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        **extra,
    )
    return env


@dataclass
class Started:
    url: str
    proc: subprocess.Popen[str]
    output: list[str] = field(default_factory=list)  # all of it once stopped


@contextmanager
def running(command: Sequence[str], env: dict[str, str], timeout: float = 60) -> Iterator[Started]:
    """Start ``command`` (the proxy, headless or in the window, on ``--port 0``) and wait
    for its line naming the URL. Stops it (SIGTERM, then SIGKILL) on the way out and
    keeps what it printed (stdout and stderr) in ``output``."""
    proc = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert proc.stdout is not None
    seen: list[str] = []
    try:
        deadline = time.monotonic() + timeout
        url = None
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            seen.append(line)
            url = m.group(1) if (m := LISTENING.search(line)) else None
        assert url, f"{command[0]} did not start its proxy:\n{''.join(seen)}"
        yield Started(url, proc, seen)
    finally:
        proc.terminate()
        try:
            rest, _ = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            rest, _ = proc.communicate()
        seen.append(rest)


def generated_key(home: Path) -> str:
    """The local key the program generated and saved in its default config file."""
    config = tomllib.loads((home / ".config" / "streamscope" / "config.toml").read_text())
    key: str = config["proxy"]["api_keys"][0]
    return key


def demo_answer(url: str, key: str) -> str:
    """The text of a streamed demo-chat answer through the proxy at ``url``."""
    body = {"model": "demo-chat", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    text = []
    with (
        httpx.Client(timeout=30) as client,
        client.stream(
            "POST",
            f"{url}/v1/chat/completions",
            json=body,
            headers={"authorization": f"Bearer {key}"},
        ) as response,
    ):
        assert response.status_code == 200, response.read()
        for line in response.iter_lines():
            if line.startswith("data: {"):
                for choice in json.loads(line[6:])["choices"]:
                    text.append(choice["delta"].get("content") or "")
    return "".join(text)
