"""Token counts where a protocol requires numbers and the upstream sent none.

Anthropic's ``message_start``/``message_delta``, Responses' ``response.completed`` and LM
Studio's ``chat.end`` carry usage whose counts their clients require (the Anthropic SDKs
and Cherry Studio fail without them; see the linter's ``anthropic.usage-fields``). When
the upstream sent no usage, the encoders used to write zeros: a count nobody measured,
shown as if it were one. Now a count the upstream did not send is estimated — input: the
request's characters / 4 (the usual rule of thumb for English text), output: one token
per content delta (the capture's own estimate) — and the frame that carries it is
preceded by the SSE comment :data:`NOTE`, which every client ignores and the capture
reads back (``tokens_estimated``). A whole answer (no comments in JSON) gets its output
estimated from its characters / 4 and the response header :data:`HEADER`. OpenAI Chat's
usage is optional: without usage from the upstream it is left out, not invented.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from streamscope.model.events import TRAITS, Usage
from streamscope.model.request import Request
from streamscope.model.response import Response

DELTAS = frozenset(tag for tag, traits in TRAITS.items() if traits.delta)
"""The event types one output token each is counted for (the encoders' per-event test):
the deltas of text, reasoning, refusal and tool arguments (``Traits.delta``)."""
NOTE = "usage estimated by StreamScope: the upstream sent none"
NOTE_BYTES = f": {NOTE}\n\n".encode()


def lacks(usage: Usage | None) -> bool:
    """Whether ``usage`` lacks the input or the output count."""
    return usage is None or usage.input_tokens is None or usage.output_tokens is None


def input_estimate(request: Request | None) -> int:
    """The request's characters (every string in it but the model's name) / 4, rounded
    up; 0 without a request."""
    if request is None:
        return 0
    chars = _chars(request) - len(request.model)
    return math.ceil(chars / 4)


def _chars(value: Any) -> int:
    """Characters of every string in ``value``, walked in place (``dataclasses.asdict``
    deep-copied the request first: 0.2 ms on a one-line request, on the stream's first
    frame)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(map(_chars, value.values()))
    if isinstance(value, list | tuple):
        return sum(map(_chars, value))
    fields = getattr(value, "__dataclass_fields__", None)
    if fields is not None and not isinstance(value, type):
        return sum(_chars(getattr(value, name)) for name in fields if name not in _BOOKKEEPING)
    return 0


# The canonical request's own bookkeeping (where it came from, what it carries for whom):
# no text a model reads.
_BOOKKEEPING = frozenset({"protocol", "carried", "origin", "item_id", "path"})


def with_estimates(usage: Usage | None, request: Request | None, deltas: int) -> tuple[Usage, bool]:
    """``usage`` with the input and output counts it lacks estimated; and whether any
    was (the caller then writes :data:`NOTE_BYTES` before the frame carrying it)."""
    u = usage or Usage()
    if not lacks(u):
        return u, False
    inp = u.input_tokens if u.input_tokens is not None else input_estimate(request)
    out = u.output_tokens if u.output_tokens is not None else deltas
    return dataclasses.replace(u, input_tokens=inp, output_tokens=out), True


HEADER = (b"x-streamscope-usage", b"estimated")
"""A whole answer's flag (a JSON body has no comments): its usage holds estimates."""


def answer_with_estimates(response: Response, request: Request | None) -> tuple[Response, bool]:
    """A whole answer with the counts its usage lacks estimated — input as for a stream,
    output: its characters (text, reasoning, refusal, tool arguments) / 4 — and whether
    any was."""
    u = response.usage or Usage()
    if not lacks(u):
        return response, False
    chars = sum(
        len(c.text)
        + len(c.reasoning)
        + len(c.refusal)
        + sum(len(t.arguments) for t in c.tool_calls)
        for c in response.choices
    )
    inp = u.input_tokens if u.input_tokens is not None else input_estimate(request)
    out = u.output_tokens if u.output_tokens is not None else math.ceil(chars / 4)
    usage = dataclasses.replace(u, input_tokens=inp, output_tokens=out)
    return dataclasses.replace(response, usage=usage), True


def is_note(comment: str) -> bool:
    """Whether an SSE comment is :data:`NOTE` (as a frame's comment line, stripped)."""
    return comment.strip() == NOTE


__all__ = [
    "DELTAS",
    "HEADER",
    "NOTE",
    "NOTE_BYTES",
    "answer_with_estimates",
    "input_estimate",
    "is_note",
    "lacks",
    "with_estimates",
]
