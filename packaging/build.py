"""Build the one-folder StreamScope app with PyInstaller, and check that it runs.

    python packaging/build.py [--dist DIR] [--work DIR] [--archive]

Needs the build tools: ``pip install -e '.[package]'`` (PyInstaller). Writes
``DIR/streamscope/`` (default ``dist/streamscope/``): the ``streamscope`` executable and
its libraries, plus, on Linux, ``share/applications/streamscope.desktop``, the icon
rendered from ``resources/icons/streamscope.svg`` at the hicolor sizes under
``share/icons/`` and ``install.sh`` (puts it all under ``~/.local``). Then it runs the
built binary's ``--version`` and fails unless it prints this checkout's version.
``--archive`` also packs the folder as ``streamscope-VERSION-PLATFORM.tar.gz``.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def version() -> str:
    """The package's version, read from the source (the build need not import it)."""
    for line in (ROOT / "app" / "streamscope" / "__init__.py").read_text().splitlines():
        if line.startswith("__version__"):
            return line.split("=", 1)[1].strip().strip("\"'")
    raise SystemExit("no __version__ in app/streamscope/__init__.py")


def run_pyinstaller(dist: Path, work: Path) -> Path:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "PyInstaller",
            "--noconfirm",
            "--log-level=WARN",
            f"--distpath={dist}",
            f"--workpath={work}",
            str(HERE / "streamscope.spec"),
        ],
        check=True,
        env={**os.environ, "STREAMSCOPE_ROOT": str(ROOT)},
    )
    return dist / "streamscope"


def render_icons(svg: Path, share: Path) -> list[Path]:
    """The app icon as PNGs at the freedesktop hicolor sizes, and the SVG itself."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication([])  # noqa: F841 (keeps Qt up)
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"cannot read the icon {svg}")
    written = []
    for size in ICON_SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        renderer.render(painter)
        painter.end()
        target = share / "icons" / "hicolor" / f"{size}x{size}" / "apps" / "streamscope.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        if not image.save(str(target)):
            raise SystemExit(f"cannot write {target}")
        written.append(target)
    scalable = share / "icons" / "hicolor" / "scalable" / "apps" / "streamscope.svg"
    scalable.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(svg, scalable)
    return [*written, scalable]


def add_desktop_files(app_dir: Path) -> None:
    share = app_dir / "share"
    (share / "applications").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(
        HERE / "linux" / "streamscope.desktop", share / "applications" / "streamscope.desktop"
    )
    render_icons(ROOT / "resources" / "icons" / "streamscope.svg", share)
    install = app_dir / "install.sh"
    shutil.copyfile(HERE / "linux" / "install.sh", install)
    install.chmod(0o755)


def check_version(app_dir: Path, expected: str) -> None:
    exe = app_dir / ("streamscope.exe" if sys.platform == "win32" else "streamscope")
    out = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=120)
    said = (out.stdout + out.stderr).strip()
    if out.returncode != 0 or said != f"streamscope {expected}":
        raise SystemExit(
            f"the built {exe} answered --version with {said!r} (status {out.returncode})"
        )
    print(f"built {exe}: {said}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "pyinstaller")
    parser.add_argument("--archive", action="store_true", help="also write a .tar.gz")
    args = parser.parse_args(argv)
    expected = version()
    app_dir = run_pyinstaller(args.dist.resolve(), args.work.resolve())
    if sys.platform.startswith("linux"):
        add_desktop_files(app_dir)
    check_version(app_dir, expected)
    if args.archive:
        machine = platform.machine().lower() or "unknown"
        base = args.dist / f"streamscope-{expected}-{sys.platform}-{machine}"
        archive = shutil.make_archive(str(base), "gztar", args.dist, "streamscope")
        print(f"packed {archive}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
