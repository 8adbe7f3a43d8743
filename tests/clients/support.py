"""Third-party clients for tests/clients: installed once into a cache, reused after.

The clients are not StreamScope's dependencies (their pins would fight ours), so they
live outside the project's venv:

- Python clients go into venvs of their own under ``$STREAMSCOPE_TEST_CACHE`` (default
  ``~/.cache/streamscope-tests``), one per pin group, in ``clients-<hash>`` where the hash
  is of the Python version and the pins: a changed pin makes a new venv. A venv counts
  only once its ``.complete`` marker is written (after pip succeeded), so an interrupted
  install is redone, not trusted. ``instructor`` has a venv of its own: every instructor
  release caps ``jiter<0.15`` while every ``openai`` that pydantic-ai accepts (>=3.31)
  needs ``jiter>=0.16``, so the two cannot share one.
- Node clients go into ``node-<hash>/node_modules`` (``npm install`` of exact versions),
  and tests/clients/node/stream.mjs is copied beside them (ES modules find packages from
  the importing file's folder).

An install that fails (a pin not on the registry, say) fails the test that needed it with
pip's or npm's own words; only a machine without node/npm skips the Node tests. Each
marker records how long the cold install took (``install_seconds``).

``flows_by_nonce`` reads back, from the proxy's captured flows, the path and key header
each client really sent, found by a nonce in its prompt.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from streamscope.realclients.node import locked
from tests.proxy.harness import Running

HERE = Path(__file__).resolve().parent
CACHE = Path(os.environ.get("STREAMSCOPE_TEST_CACHE", "~/.cache/streamscope-tests")).expanduser()

# Exact versions, as `pip index versions NAME` / `npm view NAME version` gave them.
PYTHON_PINS: dict[str, tuple[str, ...]] = {
    "clients": (
        "openai==3.57.0",
        "anthropic==2.14.0",
        "langchain-openai==1.7.4",
        "langchain-anthropic==1.7.10",
        "litellm==1.110.2",
        "pydantic-ai-slim[openai,anthropic]==2.68.0",
        "openai-agents==0.24.0",
        "llm==0.36",
    ),
    # instructor caps jiter<0.15; openai 3.3.0 is the newest openai that allows it.
    "instructor": ("instructor==1.17.0", "openai==3.3.0"),
}
NODE_PINS: dict[str, str] = {
    "openai": "7.57.0",
    "@anthropic-ai/sdk": "1.14.0",
    "ai": "7.0.173",
    "@ai-sdk/openai": "4.0.118",
    "@ai-sdk/anthropic": "4.0.105",
    "@ai-sdk/openai-compatible": "3.0.92",
    "@ai-sdk/azure": "4.0.85",
    "zod": "4.6.7",  # openai-node's strict tool helpers (openai/helpers/zod)
    "@google/genai": "3.3.0",
    "@ai-sdk/google": "4.0.121",
}
INSTALL_TIMEOUT = 900  # seconds, for one cold install

# What a base URL ends with after http://127.0.0.1:PORT, and what the other form gives.
V1, ROOT = "/v1", ""
WORKS, DOUBLED = "works", "404: doubled /v1"
PATH = {
    "openai-chat": "/v1/chat/completions",
    "anthropic": "/v1/messages",
    "responses": "/v1/responses",
}
DOUBLED_HINT = "remove /v1 from the base URL"  # the proxy's 404 on /v1/v1/...
MARKER = ".complete"


def _digest(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:12]


def _tail(text: str, lines: int = 25) -> str:
    kept = [ln for ln in text.splitlines() if not ln.startswith("WARNING: Location")]
    return "\n".join(kept[-lines:])


def _run_install(cmd: Sequence[str], cwd: Path | None, what: str) -> None:
    try:
        done = subprocess.run(
            cmd, cwd=cwd, capture_output=True, text=True, timeout=INSTALL_TIMEOUT - 60
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"installing {what} took over {INSTALL_TIMEOUT - 60} s: {' '.join(cmd)}")
    if done.returncode != 0:
        pytest.fail(
            f"installing {what} failed (exit {done.returncode}): {' '.join(cmd)}\n"
            + _tail(done.stdout + "\n" + done.stderr)
        )


@dataclass(frozen=True)
class Installed:
    path: Path
    install_seconds: float  # of the cold install that made it
    cold: bool  # made by this run


def _marker(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads((path / MARKER).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def python_venv(group: str) -> Installed:
    """The venv of pin group ``group`` (a key of :data:`PYTHON_PINS`), made if missing."""
    pins = PYTHON_PINS[group]
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    path = CACHE / f"clients-{_digest(version, pins)}"
    with locked(CACHE / f"{path.name}.lock"):
        marker = _marker(path)
        if marker is not None and marker.get("pins") == list(pins):
            return Installed(path, float(marker["install_seconds"]), cold=False)
        shutil.rmtree(path, ignore_errors=True)  # a half-made venv is not trusted
        start = time.monotonic()
        _run_install([sys.executable, "-m", "venv", str(path)], None, f"the {group} venv")
        pip = [str(path / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check"]
        _run_install([*pip, *pins], None, f"the Python clients ({group})")
        seconds = round(time.monotonic() - start, 1)
        marker = {"pins": list(pins), "python": version, "install_seconds": seconds}
        (path / MARKER).write_text(json.dumps(marker, indent=1))
        return Installed(path, seconds, cold=True)


def node_tools() -> tuple[str, str] | None:
    node, npm = shutil.which("node"), shutil.which("npm")
    return (node, npm) if node and npm else None


def node_modules() -> Installed:
    """A folder with the Node clients installed and stream.mjs beside them (skips the
    test when node or npm is missing)."""
    tools = node_tools()
    if tools is None:
        pytest.skip("node and npm are needed for the Node clients and are not on PATH")
    node, npm = tools
    path = CACHE / f"node-{_digest(NODE_PINS)}"
    with locked(CACHE / f"{path.name}.lock"):
        marker = _marker(path)
        if marker is None or marker.get("pins") != NODE_PINS:
            shutil.rmtree(path, ignore_errors=True)
            path.mkdir(parents=True)
            package = {"private": True, "type": "module", "dependencies": NODE_PINS}
            (path / "package.json").write_text(json.dumps(package, indent=1))
            start = time.monotonic()
            cmd = [npm, "install", "--no-audit", "--no-fund", "--save-exact", "--loglevel=error"]
            _run_install(cmd, path, "the Node clients")
            seconds = round(time.monotonic() - start, 1)
            marker = {"pins": NODE_PINS, "install_seconds": seconds}
            (path / MARKER).write_text(json.dumps(marker, indent=1))
            cold = True
        else:
            cold = False
        for script in (HERE / "node").glob("*.mjs"):  # always the checkout's version
            target = path / script.name
            if not target.exists() or target.read_bytes() != script.read_bytes():
                shutil.copyfile(script, target)
    return Installed(path, float(marker["install_seconds"]), cold)


def run_json(cmd: Sequence[str], env: dict[str, str] | None = None, timeout: float = 90) -> Any:
    """Run ``cmd`` and parse the JSON on the last line of its stdout."""
    done = subprocess.run(
        cmd, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise AssertionError(
            f"{cmd[0]} exited {done.returncode}\nstdout: {done.stdout[-2000:]}\n"
            f"stderr: {done.stderr[-4000:]}"
        )
    return json.loads(lines[-1])


# -- what reached the proxy ------------------------------------------------------------


@dataclass(frozen=True)
class Seen:
    """What the proxy saw of one client request."""

    path: str
    key_headers: frozenset[str]  # of KEY_HEADERS: those sent
    user_agent: str


KEY_HEADERS = ("authorization", "x-api-key", "api-key", "x-goog-api-key")


def flows_by_nonce(
    running: Running, nonces: Sequence[str], wait: float = 3.0
) -> dict[str, list[Seen]]:
    """For each nonce, the requests whose body carries it, read from the captured flows.

    A flow is stored just after its last byte went out, so a client may be done before
    its flow is there: this polls for up to ``wait`` seconds until every nonce is found
    (a request refused at the door is never a flow: its nonce stays unmatched)."""
    deadline = time.monotonic() + wait
    while True:
        found = _flows_by_nonce(running, nonces)
        if all(found.values()) or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def _flows_by_nonce(running: Running, nonces: Sequence[str]) -> dict[str, list[Seen]]:
    auth = {"Authorization": f"Bearer {running.key}"}
    found: dict[str, list[Seen]] = {n: [] for n in nonces}
    with httpx.Client(base_url=running.url, headers=auth, timeout=10) as http:
        listing = http.get("/admin/flows", params={"limit": 1000}).raise_for_status().json()
        for flow in listing["flows"]:
            detail = http.get(f"/admin/flows/{flow['id']}").raise_for_status().json()
            request = detail["request"]
            body = base64.b64decode(request.get("body_b64") or "").decode("utf-8", "replace")
            headers = {k.lower(): v for k, v in request["headers"]}
            for nonce in nonces:
                if nonce in body:
                    keys = frozenset(h for h in KEY_HEADERS if h in headers)
                    seen = Seen(request["url"], keys, headers.get("user-agent", ""))
                    found[nonce].append(seen)
    return found


def expected_text(prompt: str) -> str:
    """What demo-chat answers to ``prompt`` (app/streamscope/demo/scenarios.py, chat)."""
    return f'You said: "{prompt}". This is the StreamScope demo backend.'


def expected_output_tokens(prompt: str) -> int:
    """demo-chat counts one output token per word of its answer."""
    return len(expected_text(prompt).split(" "))
