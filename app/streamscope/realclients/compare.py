"""The linter's prediction for each client beside what the client really did.

The *intended answer* of a stream is what StreamScope's own decoder assembles from it
(the codec reads past the defects it can repair), so it is the answer a client should
show: its text, tool calls, whether usage arrived, and the upstream's error if the stream
carries one (or the body of an HTTP error).

A client *assembles the intended answer* when its text and tool calls equal the intended
ones, usage arrived when the stream carried it, and it reports an error exactly when the
stream carries one. A lint profile's claim then holds:

- "breaks" (``empty``, ``error``, ``hidden``, ``partial``, ``garbled``): the client
  raises or reports an error, assembles nothing, or assembles something other than the
  intended answer (a tool call without a name counts, whatever the stream meant: the app
  cannot dispatch it);
- ``degraded``: it assembles the intended content, with or without the usage;
- "ok" (no finding breaks it): it assembles the intended answer, the usage included.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from streamscope.codecs.preview_text import short
from streamscope.lint.clients import PROFILE_OF

if TYPE_CHECKING:
    from streamscope.lint.report import LintReport
    from streamscope.model.response import Response
    from streamscope.realclients.run import ClientRun


@dataclass(frozen=True, slots=True)
class Answer:
    """What a stream should assemble into."""

    text: str = ""
    reasoning: str = ""
    refusal: str = ""
    tool_calls: tuple[tuple[str, str], ...] = ()
    usage: bool = False
    error: str | None = None


@dataclass(slots=True)
class Verdict:
    """One client: the lint ``predicted`` effect (``ok`` or the worst effect of the
    findings that break its profile) and verdict text, what it ``observed``ly did
    (``ok``: the intended answer; ``error``, ``empty``, ``partial``; ``skipped``), whether
    the two ``agrees`` (None when skipped) and how its result differs from the intended
    answer."""

    client: str
    name: str
    profile: str
    predicted: str
    prediction: str
    observed: str
    agrees: bool | None
    differences: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "client": self.client,
            "name": self.name,
            "profile": self.profile,
            "predicted": self.predicted,
            "prediction": self.prediction,
            "observed": self.observed,
            "agrees": self.agrees,
            "differences": self.differences,
        }


def _content_type(headers: Sequence[tuple[str, str]] | None) -> str | None:
    for name, value in headers or []:
        if name.lower() == "content-type":
            return value.split(";")[0].strip().lower()
    return None


def _answer(response: Response) -> Answer:
    choice = response.choice(0) if response.choices else None
    calls = tuple((c.name, c.arguments) for c in choice.tool_calls) if choice else ()
    return Answer(
        text=choice.text if choice else "",
        reasoning=choice.reasoning if choice else "",
        refusal=choice.refusal if choice else "",
        tool_calls=calls,
        usage=response.usage is not None,
        error=response.error.message if response.error is not None else None,
    )


def intended_answer(
    raw: bytes,
    protocol: str,
    *,
    status: int = 200,
    headers: Sequence[tuple[str, str]] | None = None,
) -> Answer:
    """The answer the bytes mean, as StreamScope's decoder for ``protocol`` reads them."""
    from streamscope.codecs import get_codec
    from streamscope.model.assemble import assemble
    from streamscope.wire import FrameTooLarge, decode_all

    codec = get_codec(protocol)
    if status >= 400:
        return Answer(error=codec.decode_error_body(raw).message or f"HTTP {status}")
    ctype = _content_type(headers)
    if ctype not in (None, "text/event-stream") or raw.lstrip()[:1] == b"{":
        whole = codec.read_body(raw)  # the protocol's response, when the body is one
        if whole.response is not None:
            return _answer(whole.response)
    try:
        frames = decode_all(raw)
    except UnicodeDecodeError:
        frames = decode_all(raw.decode("utf-8", "replace").encode())
    except FrameTooLarge:
        return Answer()
    decoder = codec.stream_decoder()
    events = [e for frame in frames for e in decoder.decode(frame)]
    events += decoder.finish()
    return _answer(assemble(events))


def _args(text: str) -> Any:
    try:
        return json.loads(text) if text.strip() else {}
    except ValueError:
        return text


def _short(text: str, n: int = 60) -> str:
    return json.dumps(short(text, n), ensure_ascii=False)


def differences(run: ClientRun, intended: Answer) -> list[str]:
    """How the client's result differs from the intended answer (empty: it matches)."""
    out: list[str] = []
    if intended.error is not None:
        if run.error is None:
            out.append(f"showed no error, but the stream carries one ({_short(intended.error)})")
        return out  # the client shows the upstream's error: what it assembled before is moot
    if run.error is not None:
        out.append(f"error: {run.error.splitlines()[0][:300]}")
    shown = {intended.text, intended.text + intended.refusal, intended.refusal + intended.text}
    if run.text not in shown:
        out.append(
            f"text {_short(run.text)} ({len(run.text)} chars), intended "
            f"{_short(intended.text)} ({len(intended.text)} chars)"
        )
    got = [(name, _args(a)) for name, a in run.tool_calls]
    want = [(name, _args(a)) for name, a in intended.tool_calls]
    if got != want:
        names = [n for n, _ in run.tool_calls]
        out.append(f"tool calls {names}, intended {[n for n, _ in intended.tool_calls]}")
    nameless = [i for i, (name, _) in enumerate(run.tool_calls) if not name]
    if nameless:  # whatever the stream meant, the app holds a call it cannot dispatch
        out.append(f"tool call(s) {nameless} handed over with no name ({NAMELESS})")
    if intended.usage and run.usage is None:
        out.append(NO_USAGE)
    return out


NO_USAGE = "no usage, though the stream carries it"
"""The one difference that leaves the content whole: the client works, not cleanly."""
NAMELESS = "the app cannot dispatch such a call"


Intended = Answer | Sequence[Answer] | None
"""The intended answer, or several answers any of which counts (what the damaged stream
means to StreamScope's decoder, and what the undamaged recording it came from assembles),
or None (not known)."""


def observed(run: ClientRun, intended: Intended) -> tuple[str, list[str]]:
    """What the client did (ok / degraded / error / empty / partial / skipped), and how
    it differs (from the first intended answer, when it matches none). ``degraded``: it
    assembled the intended content and lost only the usage; ``partial``: any other
    difference in what it assembled (content lost, or other than intended)."""
    if run.skipped is not None:
        return "skipped", []
    answers = [intended] if isinstance(intended, Answer) else list(intended or [])
    if not answers:
        diffs = [f"error: {run.error}"] if run.error else []
        if not run.error and not run.text and not run.tool_calls:
            diffs.append("assembled nothing")
    else:
        found = [differences(run, a) for a in answers]
        diffs = next((d for d in found if not d), found[0])
    if not diffs:
        return "ok", []
    if diffs == [NO_USAGE]:
        return "degraded", diffs
    if run.error is not None and all(a.error is None for a in answers):
        return "error", diffs
    if not run.text and not run.tool_calls:
        return "empty", diffs
    return "partial", diffs


def compare(
    runs: Sequence[ClientRun], report: LintReport, intended: Intended = None
) -> list[Verdict]:
    """Per client run, the linter's prediction for its profile beside what it did.

    Without ``intended`` (the stream's :func:`intended_answer`), a run counts as the
    intended answer when it raised nothing and assembled some text or tool call."""
    from streamscope.lint.profiles import PROFILES
    from streamscope.lint.rule import BREAKING

    verdicts: list[Verdict] = []
    for run in runs:
        profile = PROFILE_OF[run.client]
        hits = report.breaking(profile)
        predicted = hits[0][1].effect if hits else "ok"
        prediction = report.verdicts().get(profile) or (
            f"ok: nothing in this stream is known to break {PROFILES[profile].name}"
        )
        seen, diffs = observed(run, intended)
        if seen == "skipped":
            agrees: bool | None = None
        elif predicted in BREAKING:
            nothing = not run.text and not run.tool_calls
            agrees = seen not in ("ok", "degraded") or run.error is not None or nothing
        elif predicted == "degraded":  # the content whole; the usage may be lost
            agrees = seen in ("ok", "degraded")
        else:
            agrees = seen == "ok"
        verdicts.append(
            Verdict(run.client, run.name, profile, predicted, prediction, seen, agrees, diffs)
        )
    return verdicts
