"""The window's pre-flight: a missing display or X library is named, with the packages to
install, before Qt would abort the process."""

from __future__ import annotations

import subprocess
import sys

import pytest

from streamscope.gui.display import XCB_LIBRARIES, find_library, why_no_window


def present(name: str) -> str | None:
    return f"/usr/lib/lib{name}.so"


def lacking(*names: str):  # type: ignore[no-untyped-def]
    def find(name: str) -> str | None:
        return None if name in names else present(name)

    return find


def test_linux_without_a_display_says_so() -> None:
    reason = why_no_window({}, "linux", present)
    assert reason and "DISPLAY is not set" in reason


def test_x11_with_every_library_can_open() -> None:
    assert why_no_window({"DISPLAY": ":0"}, "linux", present) is None


def test_missing_x11_libraries_are_named_with_their_packages() -> None:
    reason = why_no_window({"DISPLAY": ":0"}, "linux", lacking("xcb-cursor", "xcb-icccm"))
    assert reason is not None
    assert "apt install libxcb-cursor0 libxcb-icccm4;" in reason
    assert "keysyms" not in reason


@pytest.mark.parametrize(
    "environ, platform",
    [
        ({"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}, "linux"),
        ({"QT_QPA_PLATFORM": "offscreen"}, "linux"),
        ({"QT_QPA_PLATFORM": "xcb", "DISPLAY": ":0"}, "linux"),
        ({}, "darwin"),
        ({}, "win32"),
    ],
)
def test_no_x11_check_where_qt_does_not_use_xcb_or_the_user_chose(
    environ: dict[str, str], platform: str
) -> None:
    assert why_no_window(environ, platform, lacking(*XCB_LIBRARIES)) is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux libraries")
def test_find_library_finds_a_library_every_linux_has_and_not_a_made_up_one() -> None:
    assert find_library("c") is not None
    assert find_library("streamscope-no-such-library") is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux libraries")
def test_the_command_names_what_this_machine_lacks_or_opens(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """On this machine, with a display named but no server: when a library is missing,
    `streamscope` ends with one line naming it, status 2, and no Qt abort."""
    missing = [pkg for lib, pkg in XCB_LIBRARIES.items() if find_library(lib) is None]
    if not missing:
        pytest.skip("this machine has every X11 library the window needs")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "DISPLAY": ":99"}
    out = subprocess.run(
        [sys.executable, "-m", "streamscope", "--config", str(tmp_path / "c.toml")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and all(pkg in out.stderr for pkg in missing)
    assert "streamscope serve" in out.stderr and "Aborted" not in out.stderr
