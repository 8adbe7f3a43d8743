"""A whole-body answer, shown where a leg's frames would be.

A non-streamed answer, or an error answer (``500``, ``404``, …), has no frames: the
frames table stayed empty and said "Select a frame…". :class:`BodyView` shows instead
what the client got: the status line, the response headers (masked as captured), and
the body, as pretty JSON (the raw bytes on a toggle; a body that is no JSON is shown
raw). :class:`FramesOrBody` holds the frames side and the body view, showing one.
"""

from __future__ import annotations

import json
from http import HTTPStatus

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from streamscope.capture.flow import Leg
from streamscope.gui.theme import tint


def status_line(status: int | None) -> str:
    """``HTTP 503 Service Unavailable`` (``no status`` for None)."""
    if status is None:
        return "no status"
    try:
        return f"HTTP {status} {HTTPStatus(status).phrase}"
    except ValueError:
        return f"HTTP {status}"


def pretty_body(body: bytes) -> str | None:
    """The body as indented JSON (None: it is no JSON)."""
    try:
        return json.dumps(json.loads(body), indent=2, ensure_ascii=False)
    except ValueError:  # UnicodeDecodeError is one
        return None


def shows_body(leg: Leg) -> bool:
    """Whether a leg is read as a whole body (a non-streamed answer, or an error answer
    that carried no frames), not as frames."""
    return leg.body is not None or ((leg.status or 0) >= 400 and not leg.frames)


class BodyView(QWidget):
    """Status, headers and body of a whole-body answer (see the module docstring)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.status = QLabel()
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.raw_toggle = QCheckBox("Raw")
        self.raw_toggle.setToolTip("The body's bytes as the wire carried them")
        self.headers = _text("No headers.")
        self.headers.setMaximumHeight(140)
        self.body = _text("No body.")
        top = QHBoxLayout()
        top.addWidget(self.status, 1)
        top.addWidget(self.raw_toggle)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.headers)
        layout.addWidget(self.body, 1)
        self._raw = b""
        self._pretty: str | None = None
        self.raw_toggle.toggled.connect(self._show_body)

    def show_leg(self, leg: Leg) -> None:
        error = (leg.status or 0) >= 400
        self.status.setText(status_line(leg.status) + (" — an error answer" if error else ""))
        tint(self.status, "error" if error else "muted", "font-weight: bold")
        self.headers.setPlainText("\n".join(f"{name}: {value}" for name, value in leg.headers))
        self._raw = leg.raw()
        self._pretty = pretty_body(self._raw)
        self.raw_toggle.setEnabled(self._pretty is not None)  # no JSON: raw is all there is
        self._show_body()

    def _show_body(self) -> None:
        raw = self.raw_toggle.isChecked() or self._pretty is None
        text = self._raw.decode("utf-8", errors="replace") if raw else self._pretty
        self.body.setPlainText(text or "")


def _text(placeholder: str) -> QPlainTextEdit:
    widget = QPlainTextEdit()
    widget.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    widget.setReadOnly(True)
    widget.setPlaceholderText(placeholder)
    return widget


class FramesOrBody(QStackedWidget):
    """A leg's frames side, or its :class:`BodyView` when the leg is a whole body."""

    def __init__(self, frames: QWidget) -> None:
        super().__init__()
        self.frames = frames
        self.body = BodyView()
        self.addWidget(frames)
        self.addWidget(self.body)

    def show_frames(self) -> None:
        self.setCurrentWidget(self.frames)

    def show_leg(self, leg: Leg) -> None:
        """The body view for a whole-body leg, the frames for a stream."""
        if shows_body(leg):
            self.body.show_leg(leg)
            self.setCurrentWidget(self.body)
        else:
            self.show_frames()


__all__ = ["BodyView", "FramesOrBody", "pretty_body", "shows_body", "status_line"]
