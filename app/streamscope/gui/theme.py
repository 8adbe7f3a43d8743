"""Light and dark themes that follow the system (or the user's choice).

The Fusion style with a palette: Qt's own light palette, or a dark one built here. With
``system`` the window follows the platform's colour scheme (``QStyleHints.colorScheme``)
and switches when the system does. Frames and answers use the system's fixed-pitch font
(see :func:`streamscope.gui.widgets.monospace`); every other colour in the window is
taken from the palette or from the light/dark tones of
:data:`streamscope.gui.models.common.TONE`, and every text/ground pair meets WCAG AA
contrast (4.5:1) in both themes (tests/gui/test_theme_contrast.py measures them).
"""

from __future__ import annotations

from typing import Literal, TypeVar

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory, QWidget

from streamscope.gui.models.common import TONE

Mode = Literal["system", "light", "dark"]
MODES: tuple[Mode, ...] = ("system", "light", "dark")
W = TypeVar("W", bound=QWidget)

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
    QPalette.ColorRole.LinkVisited: "#d09cff",
    QPalette.ColorRole.Mid: "#3a3e45",
    QPalette.ColorRole.Dark: "#101214",
    QPalette.ColorRole.Light: "#3a3e45",
}
_DISABLED = "#6b7078"
# Qt's light palette where it falls short of 4.5:1: white on its selection blue is 3.7:1,
# its placeholder (black at half alpha) 3.9:1, its visited links (magenta) 3.1:1.
_LIGHT = {
    QPalette.ColorRole.Highlight: "#2566a8",
    QPalette.ColorRole.PlaceholderText: "#686868",
    QPalette.ColorRole.LinkVisited: "#8b1a9b",
}


def light_palette() -> QPalette:
    palette = QApplication.style().standardPalette()
    for role, color in _LIGHT.items():
        palette.setColor(role, QColor(color))
    return palette


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
        self.app.setPalette(dark_palette() if self.dark else light_palette())
        retint()

    def _system_changed(self, _scheme: Qt.ColorScheme) -> None:
        if self.mode == "system":
            self.apply("system")


TINT = "streamscopeTint"  # the dynamic property a tinted widget keeps its tone in


def _tint_style(tone: str, extra: str) -> str:
    return f"color: {TONE[tone].name()}" + (f"; {extra}" if extra else "")


def tint(widget: W, tone: str, extra: str = "") -> W:
    """``widget``'s text in ``tone`` ("error", "warning", "info", "muted") of the theme in
    use; ``extra``: more style-sheet declarations (``font-weight: bold``). A style sheet's
    colour is fixed, so :func:`retint` sets it again when the theme changes."""
    widget.setProperty(TINT, [tone, extra])
    widget.setStyleSheet(_tint_style(tone, extra))
    return widget


def retint() -> None:
    """Every tinted widget in the tone of the palette now in use (after a switch)."""
    for widget in QApplication.allWidgets():
        value = widget.property(TINT)
        if isinstance(value, list) and len(value) == 2:
            widget.setStyleSheet(_tint_style(str(value[0]), str(value[1])))


__all__ = [
    "MODES",
    "Mode",
    "Theme",
    "dark_palette",
    "is_dark",
    "light_palette",
    "retint",
    "system_is_dark",
    "tint",
]
