"""File → Attach to a proxy…: the URL and admin key of a ``streamscope serve`` elsewhere,
whose traffic the window then shows (:meth:`~streamscope.gui.window.MainWindow.attach`).

A URL of plain ``http://`` to another machine is attached only when Attach is pressed a
second time, after the dialog has said what crosses the network unencrypted.

Its fields are wide enough for a team's URL at the font in use, and why attaching
failed is a line of its own under them: the dialog grows to hold it (a word-wrapped
label's height depends on its width, which a shown dialog's layout does not ask by
itself), so it never covers the fields.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from streamscope.remote.store import unencrypted

Attach = Callable[[str, str], Awaitable[str | None]]

# A URL a field shows whole: a team's name for its proxy, with a port.
WIDE_URL = "https://streamscope.team.internal:8787"


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
        # Wide enough for a whole URL and key at the font in use (not a fixed pixel size).
        wide = self.url.fontMetrics().horizontalAdvance(WIDE_URL + "MM")
        for field in (self.url, self.key):
            field.setMinimumWidth(max(wide, field.sizeHint().width()))
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
        layout.setSizeConstraint(QLayout.SizeConstraint.SetMinimumSize)
        layout.addLayout(form)
        layout.addWidget(self.reason)
        layout.addWidget(buttons)
        self.task: asyncio.Task[None] | None = None
        self._confirmed = ""  # the plain-HTTP URL the user has been warned about

    def say(self, text: str) -> None:
        """Show why attaching failed (or that it is under way), under the fields: the
        dialog grows to the lines the text takes at its width."""
        self.reason.setText(text)
        self.reason.setMinimumHeight(self.reason.heightForWidth(self.reason.width()))
        self.adjustSize()

    def _go(self) -> None:
        url = self.url.text().strip()
        if unencrypted(url) and url != self._confirmed:
            # asked once per URL: pressing Attach again is the user's yes
            self._confirmed = url
            self.say(
                f"{url} is plain HTTP across the network: the admin key and every captured "
                "prompt would cross it unencrypted. Press Attach again to attach anyway, "
                "or use the https:// address of a TLS terminator in front of it."
            )
            return
        self.say("attaching…")
        self.task = asyncio.get_event_loop().create_task(self._run())

    async def _run(self) -> None:
        why = await self._attach(self.url.text().strip(), self.key.text().strip())
        if why is None:
            self.accept()
        else:
            self.say(why)


__all__ = ["AttachDialog"]
