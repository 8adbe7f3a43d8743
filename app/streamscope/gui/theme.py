"""Light and dark themes that follow the system (or the user's choice).

The Fusion style with a palette: Qt's own light palette, or a dark one built here. With
``system`` the window follows the platform's colour scheme (``QStyleHints.colorScheme``)
and switches when the system does. Frames and answers use the system's fixed-pitch font
(see :func:`streamscope.gui.leg_view.monospace`); every other colour in the window is
taken from the palette, so both themes read well.
"""

from __future__ import annotations

from typing import Literal

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory

Mode = Literal["system", "light", "dark"]
MODES: tuple[Mode, ...] = ("system", "light", "dark")

_DARK = {
    QPalette.ColorRole.Window: "#1f2125",
    QPalette.ColorRole.WindowText: "#e6e6e6",
    QPalette.ColorRole.Base: "#16181b",
    QPalette.ColorRole.AlternateBase: "#23262b",
    QPalette.ColorRole.ToolTipBase: "#2b2f35",
    QPalette.ColorRole.ToolTipText: "#e6e6e6",
    QPalette.ColorRole.PlaceholderText: "#8a8f98",
    QPalette.ColorRole.Text: "#e6e6e6",
    QPalette.ColorRole.Button: "#2a2d32",
    QPalette.ColorRole.ButtonText: "#e6e6e6",
    QPalette.ColorRole.BrightText: "#ff6b6b",
    QPalette.ColorRole.Highlight: "#3d6fb6",
    QPalette.ColorRole.HighlightedText: "#ffffff",
    QPalette.ColorRole.Link: "#6ea8fe",
    QPalette.ColorRole.Mid: "#3a3e45",
    QPalette.ColorRole.Dark: "#101214",
    QPalette.ColorRole.Light: "#3a3e45",
}
_DISABLED = "#6b7078"


def dark_palette() -> QPalette:
    palette = QPalette()
    for role, color in _DARK.items():
        palette.setColor(role, QColor(color))
    for role in (
        QPalette.ColorRole.WindowText,
        QPalette.ColorRole.Text,
        QPalette.ColorRole.ButtonText,
    ):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(_DISABLED))
    return palette


def system_is_dark() -> bool:
    return QGuiApplication.styleHints().colorScheme() == Qt.ColorScheme.Dark


def is_dark(mode: Mode) -> bool:
    return mode == "dark" or (mode == "system" and system_is_dark())


class Theme:
    """Applies a mode to the application, and keeps following the system in ``system``
    mode."""

    def __init__(self, app: QApplication, mode: Mode = "system") -> None:
        self.app = app
        self.mode: Mode = mode
        app.setStyle(QStyleFactory.create("Fusion"))
        QGuiApplication.styleHints().colorSchemeChanged.connect(self._system_changed)
        self.apply(mode)

    @property
    def dark(self) -> bool:
        return is_dark(self.mode)

    def apply(self, mode: Mode) -> None:
        self.mode = mode if mode in MODES else "system"
        self.app.setPalette(dark_palette() if self.dark else self.app.style().standardPalette())

    def _system_changed(self, _scheme: Qt.ColorScheme) -> None:
        if self.mode == "system":
            self.apply("system")


__all__ = ["MODES", "Mode", "Theme", "dark_palette", "is_dark", "system_is_dark"]
