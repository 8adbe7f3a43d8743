"""Every view of a leg names the same frame by the same number.

One real stream (ant-py_basic-text.sse) captured as a client pane captures it: network
reads that each carry several SSE frames, keepalive comments among them, and one long
wait. The timing's longest silence, the lint's long-silence finding, the events and the
``/admin/flows/{id}`` JSON (``analysis.view.flow_view``, what the endpoint returns) must
all point at the row the frames table shows that wait on, and count its rows.
"""

from __future__ import annotations

import time

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from streamscope.analysis.reading import LegReading
from streamscope.analysis.view import flow_view
from streamscope.capture.flow import CapturedFrame, Flow, Leg
from streamscope.capture.info import FlowInfo
from streamscope.capture.outcome import Outcome
from streamscope.client import SessionCallbacks, replay_session
from streamscope.gui.leg_view import timing_text
from streamscope.gui.models.frames import FramesModel
from streamscope.model.events import TextDelta
from tests.support import FIXTURES, load

MS = 1_000_000
KEEPALIVE = b": keepalive\n\n"
SSE = [("content-type", "text/event-stream")]


def chunked_leg() -> Leg:
    """Six network reads, twelve SSE frames: the wait of 31 s comes before row 8."""
    f = [frame.raw for frame in load(FIXTURES / "anthropic" / "ant-py_basic-text.sse").frames]
    chunks = [
        (KEEPALIVE + KEEPALIVE, 10),  # rows 0, 1
        (f[0] + f[1] + f[2], 12),  # rows 2-4: message_start, content_block_start, ping
        (f[3], 13),  # row 5: "Hello"
        (KEEPALIVE + f[4], 20),  # rows 6, 7
        (f[5] + f[6], 31_020),  # rows 8, 9: after the longest silence
        (f[7] + f[8], 31_021),  # rows 10, 11
    ]
    frames = [CapturedFrame(raw, t * MS) for raw, t in chunks]
    return Leg("anthropic", 200, SSE, sent_ns=0, headers_ns=5 * MS, frames=frames)


async def table_of(leg: Leg) -> FramesModel:
    model = FramesModel()
    session = replay_session(leg, SessionCallbacks(on_frames=model.append_batch))
    await session.run()
    return model


def longest_gap_row(model: FramesModel) -> int:
    gaps = []
    for row in range(model.rowCount()):
        cell = model.data(model.index(row, FramesModel.GAP), Qt.ItemDataRole.DisplayRole)
        gaps.append(float(cell.replace(",", "")) if cell and cell != "—" else -1.0)
    return max(range(len(gaps)), key=gaps.__getitem__)


async def test_every_view_names_the_longest_silence_by_its_table_row(qapp: QApplication) -> None:
    leg = chunked_leg()
    model = await table_of(leg)
    row = longest_gap_row(model)
    assert row == 8 and model.frame_index_at(row) == 8
    reading = LegReading(leg, stream_asked=True)
    timing = reading.timing
    assert timing.longest_silence_frame == row
    assert timing.frames == model.rowCount() == 12 and timing.chunks == 6
    assert f"(before frame {row})" in timing_text(timing)
    assert timing.keepalives == 3
    # the lint's long silence is the same frame
    assert reading.lint is not None
    assert [f.frame for f in reading.lint.findings if f.rule.id == "framing.long-silence"] == [row]
    # the events' frames are the table's: the "!" delta came in row 8, after the wait
    texts = [(n, ev.text) for n, ev in reading.events if isinstance(ev, TextDelta)]
    assert texts == [(5, "Hello"), (7, " there"), (8, "!")]
    # /admin/flows/{id}: the same numbers
    flow = Flow(
        "f",
        time.time(),
        0,
        "anthropic",
        FlowInfo(outcome=Outcome.COMPLETE),
        client_leg=leg,
        upstream_leg=leg,
    )
    data = flow_view(flow)
    for name in ("client", "upstream"):
        view = data["legs"][name]
        assert view["timing"]["longest_silence_frame"] == row
        assert view["timing"]["frames"] == 12
        silences = [
            f["frame"] for f in view["lint"]["findings"] if f["rule"] == "framing.long-silence"
        ]
        assert silences == [row]
        assert {e["frame"] for e in view["events"] if e.get("text") == "!"} == {row}
