"""The Node clients' install and run (app/streamscope/realclients/node.py), with stand-ins
for ``node`` and ``npm`` on PATH (small scripts in a temporary folder), so that nothing is
fetched: an install is trusted only once npm succeeded and at the pinned versions, a
failed or too-old one says why, and a run hands every job a result even when node never
answered it. (The real Node clients: tests/realclients/test_compare_profiles_proven.py.)"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from streamscope.lint.clients import BY_ID, NODE_INSTALL, NODE_MISSING, NODE_PINS
from streamscope.realclients.node import (
    MARKER,
    InstallError,
    install_node_clients,
    installed,
    missing,
    node_dir,
    node_tools,
    run_node_jobs,
)

NODE_CLIENT = BY_ID["ai-openai-compatible"]  # ai and @ai-sdk/openai-compatible


def tool(folder: Path, name: str, python: str) -> None:
    """An executable ``name`` in ``folder`` that runs ``python`` (its arguments in argv)."""
    path = folder / name
    path.write_text(f"#!{sys.executable}\nimport json, os, sys\n{python}\n")
    path.chmod(0o755)


@pytest.fixture
def tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty folder that is the whole PATH: the tests put their node and npm there."""
    folder = tmp_path / "bin"
    folder.mkdir()
    monkeypatch.setenv("PATH", str(folder))
    return folder


def fake_node(folder: Path, version: str = "v20.11.0", run: str = "") -> None:
    version_only = f"if sys.argv[1:] == ['--version']:\n    print({version!r})\n    sys.exit(0)"
    tool(folder, "node", f"{version_only}\n{run}")


def fake_npm(folder: Path, exit_code: int = 0, versions: dict[str, str] | None = None) -> None:
    """``npm install``: writes each package's package.json (``versions``), or fails."""
    tool(
        folder,
        "npm",
        f"""
with open("npm.log", "a") as log:
    log.write(" ".join(sys.argv[1:]) + "\\n")
if {exit_code}:
    print("npm ERR! code E404\\nnpm ERR! 404 Not Found - GET https://registry/ai")
    sys.exit({exit_code})
for name, version in {json.dumps(versions if versions is not None else NODE_PINS)}.items():
    os.makedirs(os.path.join("node_modules", name), exist_ok=True)
    with open(os.path.join("node_modules", name, "package.json"), "w") as f:
        json.dump({{"name": name, "version": version}}, f)
""",
    )


def test_without_node_nothing_is_installed_and_the_clients_say_so(
    tools: Path, tmp_path: Path
) -> None:
    assert node_tools() is None
    assert missing(NODE_CLIENT, tmp_path) == NODE_MISSING
    with pytest.raises(InstallError, match="not on PATH"):
        asyncio.run(install_node_clients(tmp_path))
    fake_node(tools)  # npm still missing
    assert node_tools() is None


def test_an_install_is_made_once_and_then_reused(tools: Path, tmp_path: Path) -> None:
    fake_node(tools)
    fake_npm(tools)
    assert missing(NODE_CLIENT, tmp_path) == NODE_INSTALL
    first = asyncio.run(install_node_clients(tmp_path))
    assert first.cold and first.path == node_dir(tmp_path) and first.versions == NODE_PINS
    package = json.loads((first.path / "package.json").read_text())
    assert package["dependencies"] == NODE_PINS  # the exact pins, nothing newer
    again = asyncio.run(install_node_clients(tmp_path))
    assert not again.cold and again.versions == NODE_PINS
    assert (first.path / "npm.log").read_text().count("install") == 1
    assert installed(tmp_path) == again and missing(NODE_CLIENT, tmp_path) is None


def test_a_failed_install_says_npms_words_and_is_not_trusted(tools: Path, tmp_path: Path) -> None:
    fake_node(tools)
    fake_npm(tools, exit_code=1)
    with pytest.raises(InstallError, match=r"npm install failed \(exit 1\)[\s\S]*E404"):
        asyncio.run(install_node_clients(tmp_path))
    assert not (node_dir(tmp_path) / MARKER).exists() and installed(tmp_path) is None
    fake_npm(tools)  # the next install starts again, and trusts what it made
    assert asyncio.run(install_node_clients(tmp_path)).cold


def test_a_node_too_old_is_refused_before_npm_runs(tools: Path, tmp_path: Path) -> None:
    fake_node(tools, version="v18.19.0")
    fake_npm(tools)
    with pytest.raises(InstallError, match="node v18.19.0 is too old"):
        asyncio.run(install_node_clients(tmp_path))
    assert not (node_dir(tmp_path) / "npm.log").exists()


def test_an_install_at_other_pins_or_a_broken_marker_is_no_install(
    tools: Path, tmp_path: Path
) -> None:
    fake_node(tools)
    fake_npm(tools)
    path = asyncio.run(install_node_clients(tmp_path)).path
    marker = json.loads((path / MARKER).read_text())
    (path / MARKER).write_text(json.dumps({**marker, "pins": {**NODE_PINS, "ai": "5.0.0"}}))
    assert installed(tmp_path) is None  # pins changed since: installed again
    (path / MARKER).write_text("{not json")
    assert installed(tmp_path) is None
    # npm installed less than a client needs: that client is not ready, others are
    fake_npm(tools, versions={"ai": NODE_PINS["ai"], "openai": NODE_PINS["openai"]})
    (path / MARKER).unlink()
    asyncio.run(install_node_clients(tmp_path))
    assert missing(NODE_CLIENT, tmp_path) == NODE_INSTALL
    assert missing(BY_ID["openai-node-chat"], tmp_path) is None


def test_a_run_gives_every_job_a_result(tools: Path, tmp_path: Path) -> None:
    # This node answers the first job, says nothing of the second, and exits 3.
    fake_node(
        tools,
        run="""
payload = json.load(sys.stdin)
first = payload["jobs"][0]
print("not json")
print(json.dumps({"id": first["id"], "text": first["client"] + " " + first["baseURL"]}))
print("a line on stderr\\nthe last of it", file=sys.stderr)
sys.exit(3)
""",
    )
    fake_npm(tools)
    asyncio.run(install_node_clients(tmp_path))
    jobs = [
        {"id": "1", "client": "ai-openai", "baseURL": "http://127.0.0.1:9/r/a"},
        {"id": "2", "client": "openai-node", "baseURL": "http://127.0.0.1:9/r/b"},
    ]
    results = asyncio.run(run_node_jobs(jobs, tmp_path, per_job_s=5))
    assert results["1"] == {"id": "1", "text": "ai-openai http://127.0.0.1:9/r/a"}
    assert results["2"]["error"].startswith("node exited 3 without a result")
    assert "the last of it" in results["2"]["error"]
    assert (node_dir(tmp_path) / "run_clients.mjs").is_file()  # beside node_modules
    assert asyncio.run(run_node_jobs([], tmp_path, per_job_s=5)) == {}
