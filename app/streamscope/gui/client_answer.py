"""Over the Answer tab's text: what the client that sent the request assembles, said
apart from the tolerant reading the text shows (StreamScope's decoder keeps whatever it
can read), so that an answer no client got is never shown as the client's.

What the client assembles comes from the core: its profile's claims on the flow's
findings (:func:`streamscope.lint.verdict.client_answer`), or, once "Run in real clients"
ran the leg it sent, what it assembled there
(:func:`streamscope.realclients.sender_run.ran_answer`); this label only says it, and
which of the two it is.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from streamscope.gui.models.findings import broken_style
from streamscope.gui.real_clients import RealClientsPanel
from streamscope.lint.verdict import ClientAnswer
from streamscope.realclients.sender_run import ran_answer

TOLERANT = "the tolerant reading (what StreamScope's decoder could read of every frame)"


def answer_html(answer: ClientAnswer | None) -> str:
    """The label's rich text: what the client gets, then what the text below is."""
    if answer is None:
        return f"Below: {TOLERANT}; no client of this protocol is known."
    client = html.escape(answer.client)
    gets = f"<b>What {client} assembles:</b> {html.escape(answer.gets)}"
    gets += f" <i>({html.escape(answer.source)})</i>"  # run, or its profile's claims
    if not answer.whole:
        gets = f'<span style="{broken_style()}">{gets}</span>'
    if answer.why:
        gets += f" — {html.escape(answer.why)}"
    below = f"Below: {TOLERANT}"
    below += f", which {client} assembles alike." if answer.whole else f", not what {client} gets."
    return f"{gets}<br>{below}"


class ClientAnswerLabel(QLabel):
    """What the sending client assembles, over the tolerant reading (see the module
    docstring); hidden until a lint is shown."""

    def __init__(self) -> None:
        super().__init__()
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.answer: ClientAnswer | None = None
        self.sent_by: str | None = None
        """The profile whose run :meth:`follow` shows (None: the run is not its leg's)."""
        self.hide()

    def follow(self, panel: RealClientsPanel) -> None:
        """Once ``panel`` has run the leg :attr:`sent_by` sent, say what the sender really
        assembled there, in place of its profile's word (a sender not run keeps it)."""
        panel.finished.connect(lambda: self._ran(panel))

    def _ran(self, panel: RealClientsPanel) -> None:
        answer = ran_answer(panel.runs, self.sent_by, panel.verdicts)
        if answer is not None:
            self.show_answer(answer)

    def show_answer(self, answer: ClientAnswer | None) -> None:
        self.answer = answer
        self.setText(answer_html(answer))
        self.show()

    def clear_answer(self) -> None:
        self.answer = None
        self.setText("")
        self.hide()


__all__ = ["TOLERANT", "ClientAnswerLabel", "answer_html"]
