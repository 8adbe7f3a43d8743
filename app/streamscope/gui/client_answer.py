"""Over the Answer tab's text: what the client that sent the request assembles, said
apart from the tolerant reading the text shows (StreamScope's decoder keeps whatever it
can read), so that an answer no client got is never shown as the client's.

What the client assembles comes from the core: its profile's claims on the flow's
findings (:func:`streamscope.lint.verdict.client_answer`), or, once "Run in real clients"
ran the leg it sent, what it assembled there
(:func:`streamscope.realclients.sender_run.ran_answer`); this label only says it, and
which of the two it is. When no client StreamScope knows sent it (its own client pane,
its proxy, a client it does not know), the label says who did and what each known
client of the protocol assembles (:func:`streamscope.lint.assembled.answer_for`), a line
per thing they get.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from streamscope.gui.models.findings import broken_style
from streamscope.gui.real_clients import RealClientsPanel
from streamscope.lint.assembled import ClientsAnswer
from streamscope.lint.verdict import ClientAnswer
from streamscope.realclients.sender_run import ran_answer

TOLERANT = "the tolerant reading (what StreamScope's decoder could read of every frame)"


def answer_html(answer: ClientAnswer | ClientsAnswer | None) -> str:
    """The label's rich text: what the client gets (or each known client, when none of
    them sent it), then what the text below is."""
    if answer is None:
        return f"Below: {TOLERANT}; no client of this protocol is known."
    if isinstance(answer, ClientsAnswer):
        return clients_html(answer)
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


def clients_html(answer: ClientsAnswer) -> str:
    """Who sent it, then a line per thing the known clients get (those left without the
    answer below first, said apart), then what the text below is."""
    lines = [
        f"<b>Sent by {html.escape(answer.sent_by)}.</b> {html.escape(answer.asked)} "
        f"<i>(as their profiles say)</i>:"
    ]
    for group in answer.groups:
        line = f"• {html.escape(', '.join(group.clients))}: {html.escape(group.gets)}"
        lines.append(line if group.whole else f'<span style="{broken_style()}">{line}</span>')
    apart = answer.apart
    if not apart:
        below = ", which each of them assembles alike."
    else:
        below = f", not what {html.escape(', '.join(apart))} get{'s' if len(apart) == 1 else ''}."
    return "<br>".join([*lines, f"Below: {TOLERANT}{below}"])


class ClientAnswerLabel(QLabel):
    """What the sending client assembles, over the tolerant reading (see the module
    docstring); hidden until a lint is shown."""

    def __init__(self) -> None:
        super().__init__()
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setWordWrap(True)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.answer: ClientAnswer | ClientsAnswer | None = None
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

    def show_answer(self, answer: ClientAnswer | ClientsAnswer | None) -> None:
        self.answer = answer
        self.setText(answer_html(answer))
        self.show()

    def clear_answer(self) -> None:
        self.answer = None
        self.setText("")
        self.hide()


__all__ = ["TOLERANT", "ClientAnswerLabel", "answer_html", "clients_html"]
