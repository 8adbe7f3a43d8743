"""The window is an exit too: a hostile upstream echoes its account
key in a whole body, in two stream deltas, in response headers and in an error message,
through the window's embedded proxy. Then everything the window shows — every label,
text box, table cell and tooltip of the traffic list, each flow opened, the pool panel —
and what it writes (HAR and .sse exports, its saved state) is searched for the key and
for any 8-character run of it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from PySide6.QtCore import QAbstractItemModel, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

from tests.gui.support import open_window, wait_until
from tests.proxy.harness import KEY
from tests.test_redact_exits import MODEL, _config, _hostile
from tests.upstream_server import RecordedRequest, Script, run_in_thread

ROLES = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole)
# No English word in it: a run of 8 of its characters is the key's, wherever it is found.
SECRET = "sk-gx7-Q7f3ZxW9pLm2Vn8RtY4kHs6Dc1BjE5"


def _answer(req: RecordedRequest) -> Script:
    if (req.json or {}).get("user") == "error":  # an error that quotes the key
        key = req.headers.get("authorization", "").removeprefix("Bearer ")
        message = {"error": {"message": f"bad request for key {key}", "type": "invalid"}}
        return Script(status=400, body_json=message)
    return _hostile(req)


def _model_text(model: QAbstractItemModel) -> list[str]:
    out = []
    for row in range(model.rowCount()):
        for col in range(model.columnCount()):
            index = model.index(row, col)
            out += [str(model.data(index, role) or "") for role in ROLES]
    return out


def _shown(root: QWidget) -> str:
    """Every text the widget and its children show (or would show as a tooltip)."""
    texts: list[str] = []
    for w in [root, *root.findChildren(QWidget)]:
        texts.append(w.toolTip())
        if isinstance(w, QLabel | QLineEdit):
            texts.append(w.text())
        elif isinstance(w, QPlainTextEdit | QTextEdit):
            texts.append(w.toPlainText())
        elif isinstance(w, QComboBox):
            texts += [w.itemText(i) for i in range(w.count())]
        elif isinstance(w, QAbstractItemView) and w.model() is not None:
            texts += _model_text(w.model())
    return "\n".join(texts)


def _runs(secret: str, size: int = 8) -> list[str]:
    return [secret[i : i + size] for i in range(len(secret) - size + 1)]


@pytest.mark.qasync
async def test_no_key_reaches_the_window_its_exports_or_its_state(tmp_path: Path) -> None:
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", _answer)
        state = tmp_path / "window.ini"
        async with open_window(_config(up.url, "repair", SECRET), state_file=state) as window:
            url = window.control.url
            assert url is not None

            def ask(how: str, stream: bool) -> int:
                body = {"model": MODEL, "stream": stream, "user": how, "messages": []}
                body["messages"] = [{"role": "user", "content": "hi"}]
                headers = {"authorization": f"Bearer {KEY}", "x-forward-secret": SECRET}
                r = httpx.post(f"{url}/v1/chat/completions", json=body, headers=headers)
                return r.status_code

            cases = [("body", False), ("body", True), ("split", True), ("error", False)]
            statuses = [await asyncio.to_thread(ask, how, s) for how, s in cases]
            assert statuses == [200, 200, 200, 400]
            traffic = window.traffic
            await wait_until(lambda: traffic.model.rowCount() == len(cases))
            shown = [_shown(window)]
            for row in range(traffic.model.rowCount()):
                flow_id = traffic.model.flow_id_at(row)
                detail = traffic.open_flow(flow_id)
                assert detail.task is not None
                await detail.task
                shown.append(_shown(detail))
                har = detail.export_har(tmp_path / f"{flow_id}.har")
                shown.append(har.read_text("utf-8"))
                for leg in ("client", "upstream"):
                    for path in detail.export_leg(leg, tmp_path / f"{flow_id}-{leg}.sse"):
                        shown.append(path.read_bytes().decode("utf-8", "replace"))
            window.tabs.setCurrentWidget(window.pool)
            shown.append(_shown(window.pool))
        shown.append(state.read_text("utf-8", "replace") if state.exists() else "")
    # The key was really echoed: the upstream saw it, and the error quoted it.
    assert all(r.headers.get("authorization") == f"Bearer {SECRET}" for r in up.requests)
    everything = "\n".join(shown)
    assert "bad request for key" in everything  # the error is shown...
    leaked = [run for run in _runs(SECRET) if run in everything]
    assert leaked == []  # ... with no 8 characters of the key in it, nor anything else
