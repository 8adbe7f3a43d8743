"""The Real clients panel (gui/real_clients.py) where the Python SDKs are missing: each
Python client's row says how to install them as it can be done, from a checkout
(StreamScope is not on PyPI: ``pip install 'streamscope[clients]'`` fails)."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.gui.real_clients import COLUMNS, RealClientsPanel
from streamscope.lint.clients import PYTHON_EXTRA
from streamscope.realclients import specs


@pytest.mark.qasync
async def test_a_python_client_not_installed_says_pip_install_e_from_a_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(specs, "python_version", lambda _package: None)  # no SDK here
    frames = [b'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n', b"data: [DONE]\n\n"]
    leg = Leg("openai-chat", 200, [], frames=[CapturedFrame(f, i) for i, f in enumerate(frames)])
    panel = RealClientsPanel(data_dir=tmp_path)  # (no Node clients there either)
    try:
        rows = await panel.run(leg)
        python = [r for r in rows if r.client.startswith("openai-python")]
        assert python and all(r.hint == PYTHON_EXTRA for r in python)
        for r in python:
            index = [row.client for row in panel.rows].index(r.client)
            item = panel.table.item(index, COLUMNS.index("Match"))
            assert item is not None
            assert (
                item.text()
                == "Not installed: pip install -e '.[clients]' in a checkout of StreamScope"
            )
            assert "streamscope[clients]" not in item.toolTip()
    finally:
        panel.deleteLater()
