"""One leg of a captured flow in the flow detail (:mod:`streamscope.gui.flow_detail`):
its :class:`~streamscope.gui.leg_view.LegView`, fed by
:func:`~streamscope.client.replay_session` of the captured leg (the same frames, answer,
tool-call, timing and lint panels as the client pane), or a clear empty state saying why
there is nothing to show (the upstream never answered, no codec reads it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QStackedWidget

from streamscope.capture.flow import Leg
from streamscope.client import replay_session
from streamscope.client.worker import Analyser
from streamscope.gui.leg_view import LegView
from streamscope.gui.theme import tint
from streamscope.model.request import RequestNote


class LegPane(QStackedWidget):
    """A leg's view, or a clear empty state saying why there is nothing to show."""

    def __init__(self, title: str) -> None:
        super().__init__()
        self.view = LegView(title)
        self.view.compact()  # two legs share the width
        self.empty = QLabel()
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        tint(self.empty, "muted", "font-size: 13px")
        self.addWidget(self.view)
        self.addWidget(self.empty)

    def show_empty(self, text: str) -> None:
        self.empty.setText(text)
        self.setCurrentWidget(self.empty)

    @property
    def is_empty(self) -> bool:
        return self.currentWidget() is self.empty

    async def replay(
        self,
        leg: Leg,
        body: dict[str, Any] | None,
        analyser: Analyser | None = None,
        notes: Sequence[RequestNote] = (),
    ) -> None:
        """Show the captured leg, replayed through a client session (its timing and
        lint read by ``analyser``; in a worker thread when None), with ``notes`` (what
        translating the request did) listed with its lint findings."""
        self.setCurrentWidget(self.view)
        session = replay_session(leg, self.view.callbacks(), request_body=body, analyser=analyser)
        self.view.begin(session)
        self.view.show_request_notes(notes)
        self.view.finish(await session.run())


__all__ = ["LegPane"]
