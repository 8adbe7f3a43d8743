"""Request translation: the client's canonical request encoded for the upstream's
protocol, with the notes that say what the upstream does not get as the client sent it.

Two kinds of notes: the client fields its own protocol's decoder carried
(``Request.carried``) that another protocol has no place for, and what the upstream's
encoder changed or left out (``Codec.encode_request``'s notes). A same-protocol route
forwards the client's own body (:mod:`streamscope.proxy.plan`) and has no notes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from streamscope.codecs.base import Codec
from streamscope.model.request import Request, RequestNote, RequestNotes


@dataclass(frozen=True, slots=True)
class Translated:
    """An upstream request body and what its translation changed or dropped."""

    body: dict[str, Any]
    notes: tuple[RequestNote, ...]


def carried_notes(request: Request, target: Codec, notes: RequestNotes) -> None:
    """Notes for what the client's protocol carried that ``target`` cannot take."""
    for carried in request.carried:
        if carried.protocol != target.name:
            what = carried.what or f"a {carried.protocol} field"
            notes.dropped(carried.field, f"{what}: {target.title} has no place for it")


def translate_request(request: Request, target: Codec) -> Translated:
    """``request`` (decoded from the client's protocol) as ``target``'s request body."""
    notes = RequestNotes()
    carried_notes(request, target, notes)
    body = target.encode_request(request, notes)
    return Translated(body, tuple(notes.notes))


__all__ = ["Translated", "carried_notes", "translate_request"]
