"""The header of an opened flow (:mod:`streamscope.gui.flow_detail`): the flow in one line
(:func:`header_text`: request, route, account, status, timing, verdict, and how many
fields translating the request dropped or changed), and under it those request notes,
one a line (:class:`RequestNotesLabel`, hidden when there are none).

The notes are the flow's :class:`~streamscope.model.request.RequestNote` list as
captured (masked); each is shown as its ``line``, as ``streamscope translate --request``
prints it. The header lists the first few; the client leg's Lint tab lists them all,
with the findings.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from streamscope.capture.flow import Flow
from streamscope.capture.outcome import Outcome
from streamscope.capture.summary import FlowSummary
from streamscope.gui.theme import tint
from streamscope.model.request import RequestNote

NOTES_LISTED = 4  # request notes the header lists; the Lint tab has them all


def notes_count(notes: Sequence[RequestNote]) -> str:
    """How many request fields translation dropped and changed: ``3 dropped, 1 changed``
    ("" for none)."""
    dropped = sum(n.action == "dropped" for n in notes)
    counts = [(dropped, "dropped"), (len(notes) - dropped, "changed")]
    return ", ".join(f"{n} {what}" for n, what in counts if n)


def notes_text(notes: Sequence[RequestNote], limit: int = NOTES_LISTED) -> str:
    """The request notes one a line (``note.line``): at most ``limit`` of them, then how
    many more the Lint tab lists ("" when there are none)."""
    if not notes:
        return ""
    lines = ["What translating the request for the upstream dropped or changed:"]
    lines += [f"• {n.line}" for n in notes[:limit]]
    if len(notes) > limit:
        lines.append(f"… and {len(notes) - limit} more: the client leg's Lint tab lists them all")
    return "\n".join(lines)


def header_text(flow: Flow, summary: FlowSummary) -> str:
    """The flow in one line: request, route, outcome, timing, verdict, request notes."""
    request, info = flow.request, flow.info
    upstream = info.upstream or "no upstream"
    if flow.upstream_leg.protocol:
        upstream += f" ({flow.upstream_leg.protocol})"
    route = f"{flow.client_protocol or '?'} → {upstream}"
    if info.mode:
        route += f" [{info.mode}]"
    status = flow.client_leg.status
    parts = [
        f"{request.method} {request.url}" if request.url else "(no request recorded)",
        route,
        f"account {info.account or '—'}",
        f"status {status if status is not None else 'none'}",
    ]
    if info.outcome is not None and info.outcome != Outcome.COMPLETE:
        parts[-1] += f" ({info.outcome})"
    ttft = summary.ttft_ms
    parts.append(f"TTFT {ttft:,.0f} ms" if isinstance(ttft, int | float) else "TTFT —")
    duration = flow.duration_ns
    parts.append(f"{duration / 1e6:,.0f} ms" if duration is not None else "duration —")
    parts.append(f"verdict: {(summary.verdict or 'not linted').splitlines()[0]}")
    if info.request_notes:
        parts.append(f"request: {notes_count(info.request_notes)}")
    if summary.replica:
        parts.append(f"served by {summary.replica}")
    if info.capture_note:
        parts.append(f"capture {info.capture_note}")
    elif flow.client_leg.truncated or flow.upstream_leg.truncated:
        parts.append("truncated capture")
    return "  ·  ".join(parts)


class RequestNotesLabel(QLabel):
    """The request notes under a flow's header (:func:`notes_text`; all of them in its
    tooltip), in a warning's colour since the upstream did not get the request as sent;
    hidden while there are none. GUI thread only."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.PlainText)  # notes quote what a client sent
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        tint(self, "warning")
        self.hide()

    def show_notes(self, notes: Sequence[RequestNote]) -> None:
        self.setText(notes_text(notes))
        self.setToolTip("\n".join(n.line for n in notes))
        self.setVisible(bool(notes))


__all__ = ["NOTES_LISTED", "RequestNotesLabel", "header_text", "notes_count", "notes_text"]
