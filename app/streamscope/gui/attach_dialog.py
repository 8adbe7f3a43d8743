"""File → Attach to a proxy…: the URL and admin key of a ``streamscope serve`` elsewhere,
whose traffic the window then shows (:meth:`~streamscope.gui.window.MainWindow.attach`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

Attach = Callable[[str, str], Awaitable[str | None]]


class AttachDialog(QDialog):
    """Asks for the proxy's URL and an admin key, and attaches with ``attach`` (which
    answers why it could not, or None). Stays open with the reason when it failed."""

    def __init__(self, attach: Attach, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Attach to a proxy")
        self._attach = attach
        self.url = QLineEdit()
        self.url.setPlaceholderText("https://streamscope.team.internal")
        self.key = QLineEdit()
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.key.setPlaceholderText("one of its [proxy] admin_keys")
        self.reason = QLabel("")
        self.reason.setWordWrap(True)
        form = QFormLayout()
        form.addRow("Proxy URL", self.url)
        form.addRow("Admin key", self.key)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Attach")
        buttons.accepted.connect(self._go)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.reason)
        layout.addWidget(buttons)
        self.task: asyncio.Task[None] | None = None

    def _go(self) -> None:
        self.reason.setText("attaching…")
        self.task = asyncio.get_event_loop().create_task(self._run())

    async def _run(self) -> None:
        why = await self._attach(self.url.text().strip(), self.key.text().strip())
        if why is None:
            self.accept()
        else:
            self.reason.setText(why)


__all__ = ["AttachDialog"]
