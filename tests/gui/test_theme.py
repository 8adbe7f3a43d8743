"""Light and dark themes (app/streamscope/gui/theme.py): the dark palette reads light text
on dark ground (dimmed when disabled), a mode applies to the whole application, an
unknown mode is ``system``, and ``system`` follows the platform's scheme when it changes.
(The window's theme menu: tests/gui/test_window.py.)"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from streamscope.gui.theme import Theme, dark_palette, is_dark, system_is_dark

ROLE = QPalette.ColorRole


def window_lightness(app: QApplication) -> int:
    return app.palette().color(ROLE.Window).lightness()


@pytest.fixture
def theme(qapp: QApplication) -> Iterator[Theme]:
    theme = Theme(qapp, "light")
    yield theme
    theme.apply("light")  # the next test sees the default again


def test_the_dark_palette_is_light_on_dark() -> None:
    palette = dark_palette()
    for ground, text in ((ROLE.Window, ROLE.WindowText), (ROLE.Base, ROLE.Text)):
        assert palette.color(ground).lightness() < 60 < 200 < palette.color(text).lightness()
    disabled = palette.color(QPalette.ColorGroup.Disabled, ROLE.Text).lightness()
    assert 60 < disabled < palette.color(ROLE.Text).lightness()  # dimmed, still readable


def test_which_modes_are_dark() -> None:
    assert is_dark("dark") and not is_dark("light")
    assert is_dark("system") == system_is_dark()
    assert not system_is_dark()  # offscreen Qt reports no dark scheme


def test_a_mode_applies_to_the_application(qapp: QApplication, theme: Theme) -> None:
    assert qapp.style().name().lower() == "fusion"
    light = window_lightness(qapp)
    theme.apply("dark")
    assert theme.dark and window_lightness(qapp) < 80 < light
    theme.apply("nonsense")  # type: ignore[arg-type]  # a stale saved setting, say
    assert theme.mode == "system" and window_lightness(qapp) == light


def test_system_mode_follows_the_platforms_scheme(qapp: QApplication, theme: Theme) -> None:
    hints = qapp.styleHints()
    theme.apply("system")
    qapp.setPalette(dark_palette())  # as if the system had been dark until now
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Light)  # the platform says: light now
    assert window_lightness(qapp) > 200
    theme.apply("dark")  # a chosen mode stays whatever the system does
    hints.colorSchemeChanged.emit(Qt.ColorScheme.Light)
    assert window_lightness(qapp) < 80
