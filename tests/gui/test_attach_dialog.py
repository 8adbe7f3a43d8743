"""File → Attach to a proxy… (gui/attach_dialog.py): what it hands on, and what it shows
when attaching fails: its fields whole at the default font, the reason under them."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QDialogButtonBox

from streamscope.gui.attach_dialog import AttachDialog
from tests.gui.support import wait_until


@pytest.mark.qasync
async def test_it_attaches_with_what_was_typed_and_stays_open_on_a_refusal() -> None:
    asked: list[tuple[str, str]] = []
    answers = ["cannot attach to https://x: the proxy refused the admin key", None]

    async def attach(url: str, key: str) -> str | None:
        asked.append((url, key))
        return answers.pop(0)

    dialog = AttachDialog(attach)
    dialog.open()
    try:
        dialog.url.setText("  https://x  ")
        dialog.key.setText("sk-admin-1")
        ok = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
        ok.click()
        await wait_until(lambda: "refused" in dialog.reason.text())
        assert dialog.isVisible() and asked == [("https://x", "sk-admin-1")]
        ok.click()
        await wait_until(lambda: not dialog.isVisible())
        assert dialog.result() == dialog.DialogCode.Accepted and len(asked) == 2
        assert dialog.key.echoMode() == dialog.key.EchoMode.Password  # never shown
    finally:
        dialog.deleteLater()


LONG_REFUSAL = (
    "cannot attach to https://streamscope.team.internal:8787: the proxy refused the admin "
    "key (401 unauthorized): /admin takes only one of its [proxy] admin_keys, and a "
    "client key is not one of them"
)


@pytest.mark.qasync
async def test_its_fields_are_whole_and_a_refusal_is_laid_out_under_them() -> None:
    async def attach(url: str, key: str) -> str | None:
        return LONG_REFUSAL

    dialog = AttachDialog(attach)
    dialog.open()
    try:
        await wait_until(dialog.isVisible)
        fields = (dialog.url, dialog.key)
        for field in fields:
            # whole at the font in use: its own size hint, and the placeholder's text
            shown = field.fontMetrics().horizontalAdvance(field.placeholderText())
            assert field.width() >= field.sizeHint().width()
            assert field.width() > shown
        assert dialog.width() >= 300  # (it was about 230 px: the URL was cut)
        dialog.url.setText("https://streamscope.team.internal:8787")
        dialog.key.setText("sk-admin-wrong")
        dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok).click()
        await wait_until(lambda: dialog.reason.text() == LONG_REFUSAL)
        await wait_until(lambda: dialog.reason.height() >= _lines(dialog))
        reason = dialog.reason.geometry()
        for field in fields:
            assert field.height() >= field.sizeHint().height()  # not squeezed
            assert not reason.intersects(field.geometry())
            assert reason.top() >= field.geometry().bottom()  # under the fields
        assert dialog.rect().contains(reason)  # inside the dialog, not over its edge
    finally:
        dialog.deleteLater()


def _lines(dialog: AttachDialog) -> int:
    """The height the reason's text takes, wrapped at the label's width."""
    return dialog.reason.heightForWidth(dialog.reason.width())


@pytest.mark.qasync
@pytest.mark.parametrize(
    ("url", "asks"),
    [
        ("http://10.1.2.3:8787", True),
        ("http://streamscope.team.internal", True),
        ("https://10.1.2.3:8787", False),
        ("http://127.0.0.1:8787", False),
        ("http://localhost:8787/v1", False),
    ],
)
async def test_plain_http_to_another_machine_is_attached_only_when_asked_again(
    url: str, asks: bool
) -> None:
    """Once per URL: the second press is the user's yes."""
    asked: list[str] = []

    async def attach(url: str, key: str) -> str | None:
        asked.append(url)
        return None

    dialog = AttachDialog(attach)
    dialog.open()
    try:
        dialog.url.setText(url)
        dialog.key.setText("sk-admin-1")
        ok = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
        ok.click()
        if asks:
            await wait_until(lambda: "unencrypted" in dialog.reason.text())
            assert asked == [] and dialog.isVisible()
            assert "Press Attach again" in dialog.reason.text()
            ok.click()
        await wait_until(lambda: not dialog.isVisible())
        assert asked == [url]
    finally:
        dialog.deleteLater()
