"""The Node clients: installed once by ``streamscope clients install``, run as one process.

``install_node_clients(data_dir)`` runs ``npm install`` of the exact versions in
:data:`~streamscope.realclients.specs.NODE_PINS` into ``<data_dir>/clients/node`` and
writes a ``.complete`` marker (the pins, the versions npm really installed, how long it
took) only once npm succeeded, so an interrupted install is redone, not trusted. A lock
file keeps two installs from sharing the folder. Nothing else fetches anything: a run
only reads that folder.

A run copies ``run_clients.mjs`` (package data) beside ``node_modules`` (ES modules find
packages from the importing file's folder) and runs it once for all jobs.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from streamscope.lint.clients import NODE_INSTALL, NODE_MISSING, NODE_PINS, ClientSpec

MARKER = ".complete"
SCRIPT = "run_clients.mjs"
MIN_NODE = 20


class InstallError(RuntimeError):
    """npm failed, or node/npm are missing: the message says what to do."""


@dataclass(frozen=True, slots=True)
class NodeInstall:
    """An installed set of Node clients: its folder, the versions npm installed, and how
    long the cold install took."""

    path: Path
    versions: dict[str, str]
    install_seconds: float
    cold: bool


def default_data_dir() -> Path:
    from streamscope.config import default_data_dir as data_dir

    return data_dir()


def node_dir(data_dir: Path | None = None) -> Path:
    return (data_dir or default_data_dir()) / "clients" / "node"


def node_tools() -> tuple[str, str] | None:
    """(node, npm) when both are on PATH and node is new enough."""
    node, npm = shutil.which("node"), shutil.which("npm")
    return (node, npm) if node and npm else None


def read_marker(path: Path, pins: dict[str, str]) -> dict[str, Any] | None:
    """The ``.complete`` marker of an install in ``path`` made at ``pins``, or None (no
    finished install there, or one at other pins)."""
    try:
        data = json.loads((path / MARKER).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("pins") == pins else None


def _marker(path: Path) -> dict[str, Any] | None:
    return read_marker(path, NODE_PINS)


def installed(data_dir: Path | None = None) -> NodeInstall | None:
    """The Node clients installed in ``data_dir`` at the pinned versions, or None."""
    path = node_dir(data_dir)
    marker = _marker(path)
    if marker is None:
        return None
    versions = marker.get("versions") or {}
    return NodeInstall(path, dict(versions), float(marker.get("install_seconds", 0)), False)


def missing(spec: ClientSpec, data_dir: Path | None = None) -> str | None:
    """None when a Node client can run, else how to get it."""
    if node_tools() is None:
        return NODE_MISSING
    have = installed(data_dir)
    if have is None or any(p not in have.versions for p in spec.package_versions):
        return NODE_INSTALL
    return None


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path``: two installs never share a folder (POSIX; on
    Windows the marker alone guards against a half-made install)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # Windows
        yield
        return
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def read_versions(path: Path, names: Iterable[str]) -> dict[str, str]:
    """The versions npm really installed in ``path`` of the packages ``names``."""
    out: dict[str, str] = {}
    for name in names:
        try:
            meta = json.loads((path / "node_modules" / name / "package.json").read_text())
        except (OSError, ValueError):
            continue
        out[name] = str(meta.get("version"))
    return out


async def install_node_clients(
    data_dir: Path | None = None, *, npm_seconds: float = 900
) -> NodeInstall:
    """Install the pinned Node clients into ``<data_dir>/clients/node`` (once: a finished
    install at the same pins is reused). Raises :class:`InstallError` with npm's words."""
    tools = node_tools()
    if tools is None:
        raise InstallError(f"node and npm are not on PATH: {NODE_MISSING}")
    path = node_dir(data_dir)
    with locked(path.parent / "node.lock"):
        have = installed(data_dir)
        if have is not None:
            return have
        seconds = await npm_install(path, NODE_PINS, npm_seconds)
        versions = read_versions(path, NODE_PINS)
        marker = {"pins": NODE_PINS, "versions": versions, "install_seconds": seconds}
        (path / MARKER).write_text(json.dumps(marker, indent=1))
        return NodeInstall(path, versions, seconds, cold=True)


async def npm_install(path: Path, dependencies: dict[str, str], npm_seconds: float) -> float:
    """``npm install`` of the exact ``dependencies`` into an emptied ``path`` (the caller
    holds its lock and writes the marker once this returns); the seconds it took. Raises
    :class:`InstallError` with npm's words."""
    tools = node_tools()
    if tools is None:
        raise InstallError(f"node and npm are not on PATH: {NODE_MISSING}")
    await _check_node_version(tools[0])
    _fresh_package(path, dependencies)
    start = time.monotonic()
    cmd = [tools[1], "install", "--no-audit", "--no-fund", "--save-exact", "--loglevel=error"]
    code, output = await _run(cmd, path, npm_seconds)
    if code != 0:
        tail = "\n".join(output.splitlines()[-20:])
        raise InstallError(f"npm install failed (exit {code}) in {path}:\n{tail}")
    return round(time.monotonic() - start, 1)


def _fresh_package(path: Path, dependencies: dict[str, str]) -> None:
    shutil.rmtree(path, ignore_errors=True)  # a half-made install is not trusted
    path.mkdir(parents=True)
    package = {"private": True, "type": "module", "dependencies": dependencies}
    (path / "package.json").write_text(json.dumps(package, indent=1))


async def _check_node_version(node: str) -> None:
    code, out = await _run([node, "--version"], None, 30)
    try:
        major = int(out.strip().lstrip("v").split(".")[0])
    except ValueError:
        major = 0
    if code != 0 or major < MIN_NODE:
        raise InstallError(f"node {out.strip() or '?'} is too old: {NODE_MISSING}")


async def _run(cmd: list[str], cwd: Path | None, seconds: float) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        *cmd,
        cwd=cwd,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), seconds)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return -1, f"timed out after {seconds:.0f} s: {' '.join(cmd)}"
    except asyncio.CancelledError:
        if proc.returncode is None:
            proc.kill()
            await asyncio.shield(proc.wait())
        raise
    return proc.returncode or 0, out.decode("utf-8", "replace")


def _script(path: Path) -> Path:
    """The runner script beside ``node_modules`` (copied when it differs)."""
    source = resources.files("streamscope.realclients").joinpath(SCRIPT).read_bytes()
    target = path / SCRIPT
    if not target.exists() or target.read_bytes() != source:
        tmp = target.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(source)
        tmp.replace(target)
    return target


async def run_node_jobs(
    jobs: list[dict[str, str]], data_dir: Path | None, per_job_s: float, concurrency: int = 8
) -> dict[str, dict[str, Any]]:
    """Run the jobs (``{"id", "client", "baseURL"}``) in one node process; results by id.
    A job the process never answered (it crashed or hung) gets an ``error``."""
    tools = node_tools()
    have = installed(data_dir)
    if tools is None or have is None or not jobs:
        return {}
    script = await asyncio.to_thread(_script, have.path)
    payload = {"timeout_ms": round(per_job_s * 1000), "jobs": jobs, "concurrency": concurrency}
    proc = await asyncio.create_subprocess_exec(
        tools[0],
        str(script),
        cwd=have.path,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    # every job has its own timeout inside; this bounds a process that hangs anyway
    limit = per_job_s * (1 + len(jobs) / max(1, concurrency)) + 30
    try:
        out, err = await asyncio.wait_for(proc.communicate(json.dumps(payload).encode()), limit)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        out, err = b"", f"node did not finish within {limit:.0f} s".encode()
    except asyncio.CancelledError:  # the run was cancelled: no node left behind
        if proc.returncode is None:
            proc.kill()
            await asyncio.shield(proc.wait())
        raise
    results: dict[str, dict[str, Any]] = {}
    for line in out.decode("utf-8", "replace").splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            results[item["id"]] = item
    why = err.decode("utf-8", "replace").strip().splitlines()[-3:]
    for job in jobs:
        results.setdefault(
            job["id"],
            {"error": f"node exited {proc.returncode} without a result: {' '.join(why)}"},
        )
    return results
