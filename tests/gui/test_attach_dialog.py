"""File → Attach to a proxy… (gui/attach_dialog.py): what it hands on, and what it shows
when attaching fails."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QDialogButtonBox

from streamscope.gui.attach_dialog import AttachDialog
from tests.gui.support import wait_until


@pytest.mark.qasync
async def test_it_attaches_with_what_was_typed_and_stays_open_on_a_refusal() -> None:
    asked: list[tuple[str, str]] = []
    answers = ["cannot attach to http://x: the proxy refused the admin key", None]

    async def attach(url: str, key: str) -> str | None:
        asked.append((url, key))
        return answers.pop(0)

    dialog = AttachDialog(attach)
    dialog.open()
    try:
        dialog.url.setText("  http://x  ")
        dialog.key.setText("sk-admin-1")
        ok = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
        ok.click()
        await wait_until(lambda: "refused" in dialog.reason.text())
        assert dialog.isVisible() and asked == [("http://x", "sk-admin-1")]
        ok.click()
        await wait_until(lambda: not dialog.isVisible())
        assert dialog.result() == dialog.DialogCode.Accepted and len(asked) == 2
        assert dialog.key.echoMode() == dialog.key.EchoMode.Password  # never shown
    finally:
        dialog.deleteLater()
