"""The one-folder app: ``packaging/build.py`` builds it with PyInstaller from this
checkout; the binary answers ``--version``, serves the demo and its shipped recordings,
opens the window with its spawned analysis worker, and ``install.sh`` puts it, its
desktop entry and its icons under a prefix."""

from __future__ import annotations

import configparser
import os
import struct
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from streamscope import __version__
from tests.packaging.support import (
    DEMO_ANSWER,
    ROOT,
    demo_answer,
    generated_key,
    isolated_env,
    running,
)

pytestmark = [
    pytest.mark.timeout(900),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux build"),
]
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


@pytest.fixture(scope="module")
def app_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    build = tmp_path_factory.mktemp("pyinstaller")
    subprocess.run(
        [
            sys.executable,
            str(ROOT / "packaging" / "build.py"),
            f"--dist={build / 'dist'}",
            f"--work={build / 'work'}",
        ],
        check=True,
        timeout=800,
    )
    return build / "dist" / "streamscope"


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def test_the_built_binary_answers_version(app_dir: Path) -> None:
    out = subprocess.run(
        [str(app_dir / "streamscope"), "--version"], capture_output=True, text=True, timeout=60
    )
    assert (out.returncode, out.stdout.strip()) == (0, f"streamscope {__version__}")


def test_the_built_binary_serves_the_demo_and_the_shipped_recordings(
    app_dir: Path, tmp_path: Path
) -> None:
    env = isolated_env(tmp_path)
    with running([str(app_dir / "streamscope"), "serve", "--port", "0"], env) as started:
        key = generated_key(tmp_path)
        assert demo_answer(started.url, key) == DEMO_ANSWER
        models = httpx.get(f"{started.url}/v1/models", headers={"authorization": f"Bearer {key}"})
    ids = {m["id"] for m in models.json()["data"]}
    replay = ROOT / "resources" / "replay"
    streams = {".sse", ".jsonl", ".json"}
    shipped = {
        f"replay/{p.stem}" for p in (replay / "recordings").iterdir() if p.suffix in streams
    } | {f"replay/broken/{p.stem}" for p in (replay / "broken").iterdir() if p.suffix in streams}
    assert shipped and shipped <= ids


def test_the_built_window_runs_its_proxy_and_its_spawned_worker(
    app_dir: Path, tmp_path: Path
) -> None:
    """The analysis worker is started with "spawn": the frozen binary is run again with
    multiprocessing's arguments, which only freeze_support() turns into a worker (without
    it the CLI rejects them as a command and the worker dies)."""
    env = isolated_env(tmp_path, QT_QPA_PLATFORM="offscreen")
    with running([str(app_dir / "streamscope"), "--port", "0"], env) as started:
        proc = started.proc
        assert demo_answer(started.url, generated_key(tmp_path)) == DEMO_ANSWER
        deadline = time.monotonic() + 20
        workers: list[str] = []
        while not workers and time.monotonic() < deadline:
            workers = [args for args in children(proc.pid) if "--multiprocessing-fork" in args]
            time.sleep(0.2)
        assert workers, children(proc.pid)
        time.sleep(1.0)
        assert proc.poll() is None
        assert all(w in children(proc.pid) for w in workers), "the worker died"
    said = "".join(started.output)
    assert "usage:" not in said and "invalid choice" not in said, said


def children(pid: int) -> list[str]:
    """The command lines of ``pid``'s child processes."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == pid:
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
        except (OSError, ValueError):
            continue
    return found


def test_the_desktop_entry_names_the_binary_and_the_icon(app_dir: Path) -> None:
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(app_dir / "share" / "applications" / "streamscope.desktop")
    entry = parser["Desktop Entry"]
    assert entry["Type"] == "Application"
    assert entry["Name"] == "StreamScope"
    assert entry["Exec"].split()[0] == entry["TryExec"] == "streamscope"
    assert entry["Icon"] == "streamscope"
    assert entry["Terminal"] == "false"
    assert entry["Categories"].endswith(";") and "Development" in entry["Categories"]


def test_the_icons_are_rendered_at_every_hicolor_size(app_dir: Path) -> None:
    hicolor = app_dir / "share" / "icons" / "hicolor"
    for size in ICON_SIZES:
        assert png_size(hicolor / f"{size}x{size}" / "apps" / "streamscope.png") == (size, size)
    svg = hicolor / "scalable" / "apps" / "streamscope.svg"
    assert svg.read_bytes() == (ROOT / "resources" / "icons" / "streamscope.svg").read_bytes()


def test_install_sh_installs_under_a_prefix_and_uninstalls(app_dir: Path, tmp_path: Path) -> None:
    prefix = tmp_path / "prefix"
    env = {**os.environ, "PREFIX": str(prefix), "HOME": str(tmp_path)}
    subprocess.run(["sh", str(app_dir / "install.sh")], env=env, check=True, timeout=120)
    linked = prefix / "bin" / "streamscope"
    assert linked.is_symlink()
    out = subprocess.run([str(linked), "--version"], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == f"streamscope {__version__}"
    assert (prefix / "share" / "applications" / "streamscope.desktop").is_file()
    assert png_size(prefix / "share" / "icons" / "hicolor" / "48x48" / "apps" / "streamscope.png")
    assert not (prefix / "lib" / "streamscope" / "share").exists()

    subprocess.run(["sh", str(app_dir / "install.sh"), "--uninstall"], env=env, check=True)
    assert not linked.exists() and not linked.is_symlink()
    assert not (prefix / "lib" / "streamscope").exists()
    assert not list((prefix / "share").rglob("streamscope*"))
