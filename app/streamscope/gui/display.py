"""Whether the window can open here, asked before Qt is: Qt's answer to a missing display
or a missing X library is to print a few lines and abort the process.

On Linux with X11, Qt's ``xcb`` platform plugin needs a few libraries that desktops have
and minimal systems (servers, containers, some WSL images) lack. Qt checks for
``libxcb-cursor`` itself, prints "Could not load the Qt platform plugin" and aborts;
the others fail the plugin's loading the same way. Naming the packages to install is
more use to a user than that.
"""

from __future__ import annotations

import ctypes.util
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

# The libraries Qt 6's xcb plugin loads that a minimal Linux may lack (``ldd`` of
# libqxcb.so and libQt6XcbQpa.so), with the Debian/Ubuntu package of each.
XCB_LIBRARIES = {
    "xcb-cursor": "libxcb-cursor0",
    "xcb-icccm": "libxcb-icccm4",
    "xcb-keysyms": "libxcb-keysyms1",
    "xkbcommon-x11": "libxkbcommon-x11-0",
}


def find_library(name: str) -> str | None:
    """The system's ``lib<name>``, or the one-folder app's own copy of it (PyInstaller
    bundles such a library when the build machine had it)."""
    found = ctypes.util.find_library(name)
    bundle = getattr(sys, "_MEIPASS", None)
    if found is None and bundle is not None:
        found = next((str(p) for p in Path(bundle).rglob(f"lib{name}.so*")), None)
    return found


def why_no_window(
    environ: Mapping[str, str],
    platform: str = sys.platform,
    find_library: Callable[[str], str | None] = find_library,
) -> str | None:
    """Why the window cannot open in this environment, or None when it should. Setting
    ``QT_QPA_PLATFORM`` (``xcb`` to insist) skips the check and leaves it to Qt."""
    if not platform.startswith("linux") or environ.get("QT_QPA_PLATFORM"):
        return None  # macOS and Windows have their own platform; an explicit one is kept
    if environ.get("WAYLAND_DISPLAY"):
        return None
    if not environ.get("DISPLAY"):
        return "no display to open the window on (DISPLAY is not set)"
    missing = [pkg for lib, pkg in XCB_LIBRARIES.items() if find_library(lib) is None]
    if missing:
        return (
            "the window needs X11 libraries this system lacks: "
            f"{', '.join(missing)} (Debian/Ubuntu: apt install {' '.join(missing)}; "
            "QT_QPA_PLATFORM=xcb tries anyway)"
        )
    return None


__all__ = ["XCB_LIBRARIES", "find_library", "why_no_window"]
