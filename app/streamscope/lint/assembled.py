"""What a flow's answer becomes in the clients, said for whoever sent the request: the
Answer pane's word over the tolerant reading.

When a client StreamScope knows sent it (its profile speaks the flow's protocol), what
that client assembles is the answer (:func:`streamscope.lint.verdict.client_answer`).
Anyone else — StreamScope's own client pane, its Check an upstream, its proxy (the
upstream leg), a captured flow replayed in the client pane, or a client whose
User-Agent names no profile (:func:`streamscope.lint.sender.sender_said`) — gets no one
client's answer, as though that client had sent it: :func:`clients_answer` says what
each known client of the protocol assembles (each as its profile says), grouped by what
they get, those left without the answer the tolerant reading shows first.

:func:`answer_for` picks between the two; it is None only when no profile speaks the
flow's protocol, the one case where no client of it is known.
"""

from __future__ import annotations

from dataclasses import dataclass

from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.lint.report import LintReport
from streamscope.lint.sender import UNKNOWN_SENDER
from streamscope.lint.verdict import ClientAnswer, ErrorAnswer, client_answer

CLIENT_PANE = "StreamScope's client pane"
CHECK_UPSTREAM = "StreamScope's Check an upstream (a probe of its battery)"
PROXY = "StreamScope's proxy, to the upstream (this is the upstream leg)"
REPLAYED = "the client of a captured flow, replayed here"
IMPORTED = "a client StreamScope does not know (an imported stream: no request recorded)"
"""Who sent a request when StreamScope did, or when it cannot know who did (a replay
hands over the answer alone, an import has no request)."""


@dataclass(frozen=True, slots=True)
class AnswerGroup:
    """The clients (display names, in the profiles' order) that get one same thing:
    ``gets`` (a :data:`~streamscope.lint.verdict.GETS` phrase, or what an outcome or an
    error leaves them with), and whether that is the answer the tolerant reading shows
    (``whole``)."""

    gets: str
    whole: bool
    clients: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ClientsAnswer:
    """What every known client of a flow's protocol assembles of it (``answers``, one
    per profile, as each profile says), when ``sent_by`` — no client StreamScope knows
    for this protocol — sent it; ``protocol`` the protocol's title (None: any)."""

    sent_by: str
    protocol: str | None
    answers: tuple[ClientAnswer, ...]

    @property
    def whole(self) -> bool:
        """Whether every one of them has the answer the tolerant reading shows."""
        return all(a.whole for a in self.answers)

    @property
    def apart(self) -> tuple[str, ...]:
        """The clients left without that answer, in the profiles' order."""
        return tuple(a.client for a in self.answers if not a.whole)

    @property
    def groups(self) -> tuple[AnswerGroup, ...]:
        """The clients grouped by what they get: those without the answer first, then
        those with it; each group in the order its first client comes."""
        found: dict[tuple[str, bool], list[str]] = {}
        for a in self.answers:
            found.setdefault((a.gets, a.whole), []).append(a.client)
        groups = [AnswerGroup(gets, whole, tuple(who)) for (gets, whole), who in found.items()]
        return tuple(sorted(groups, key=lambda g: g.whole))  # (a stable sort keeps order)

    @property
    def asked(self) -> str:
        """``What the known clients of Anthropic Messages assemble``."""
        of = f" of {self.protocol}" if self.protocol else ""
        return f"What the known clients{of} assemble"

    @property
    def text(self) -> str:
        """``Sent by StreamScope's client pane. What the known clients of … assemble:
        A, B: an error (…); C: the answer as read here``."""
        said = "; ".join(f"{', '.join(g.clients)}: {g.gets}" for g in self.groups)
        return f"Sent by {self.sent_by}. {self.asked}: {said}"


def protocol_title(protocol: str | None) -> str | None:
    """A protocol as a person names it (``Anthropic Messages``); None when not known."""
    if protocol is None:
        return None
    return get_codec(protocol).title if protocol in PROTOCOLS else protocol


def clients_answer(
    report: LintReport, sent_by: str, error: ErrorAnswer | None = None
) -> ClientsAnswer | None:
    """What each known client of the flow's protocol assembles of it, ``sent_by`` having
    sent it, ``error`` the error answer it got (None: none); None when no profile speaks
    the protocol."""
    answers = [client_answer(report, p.id, error) for p in report.profiles]
    if not answers:
        return None
    said = tuple(a for a in answers if a is not None)
    return ClientsAnswer(sent_by, protocol_title(report.protocol), said)


def answer_for(
    report: LintReport, sender: str | None, error: ErrorAnswer | None, sent_by: str
) -> ClientAnswer | ClientsAnswer | None:
    """The Answer pane's word (see the module docstring): ``sender``'s own answer when it
    is a known client of the flow's protocol, else what each known client assembles,
    ``sent_by`` saying who sent it; None when no client of the protocol is known."""
    if sender is not None and sender in {p.id for p in report.profiles}:
        return client_answer(report, sender, error)
    return clients_answer(report, sent_by, error)


__all__ = [
    "CHECK_UPSTREAM",
    "CLIENT_PANE",
    "IMPORTED",
    "PROXY",
    "REPLAYED",
    "UNKNOWN_SENDER",
    "AnswerGroup",
    "ClientsAnswer",
    "answer_for",
    "clients_answer",
    "protocol_title",
]
