"""The proxy's recent Responses answers: what one is (:class:`Answer`), how many and how
long they are kept (:class:`Limits`), what a look-up finds (:class:`Found`), and the store
of one machine (:class:`MemoryAnswers`).

An answer keeps the input items it was asked with (after resolution: the whole
conversation, so ``previous_response_id`` expands to everything that came before) and the
output items exactly as the client saw them (with the ids the client got), with the
upstream that served it and whether those ids were the upstream's own (passthrough) or
the proxy's (repair, translation). Each output item with an id can be found by it.

NOTE: items are kept once each, by a hash of their JSON: a conversation's requests repeat
every earlier item (each step of a tool loop sends the whole history again), so keeping
each answer's input whole would grow with the square of a conversation's length. Bytes
count the distinct items kept.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from streamscope.wire import jsontext

JSON = dict[str, Any]
Mask = Callable[[bytes], bytes]
GONE_KEPT = 10_000  # ids remembered as dropped (to say why), at most
MIB = 1024 * 1024


def _plain(mask: bytes) -> bytes:
    return mask


@dataclass(frozen=True, slots=True)
class Limits:
    """How much is kept: the newest ``max_answers`` answers, none older than
    ``max_seconds``, within ``max_bytes`` of distinct items."""

    max_answers: int = 2000
    max_seconds: float = 168 * 3600.0
    max_bytes: int = 128 * MIB

    def describe(self) -> str:
        """How much this proxy keeps, in a sentence's words."""
        return (
            f"it keeps its last {self.max_answers:,} answers for {_span(self.max_seconds)},"
            f" within {_size(self.max_bytes)}"
        )

    def expired(self, age: float) -> str:
        return (
            f"it was answered {_span(age)} ago, and this proxy keeps answers for"
            f" {_span(self.max_seconds)} ([conversation] max_hours)"
        )

    def evicted(self) -> str:
        return (
            f"it was dropped to make room: this proxy keeps at most {self.max_answers:,}"
            f" answers within {_size(self.max_bytes)} ([conversation] max_answers,"
            " max_megabytes)"
        )


def _span(seconds: float) -> str:
    if seconds >= 2 * 86400 and seconds % 86400 == 0:
        return f"{seconds / 86400:g} days"
    if seconds >= 3600:
        return f"{seconds / 3600:.3g} hours"
    if seconds >= 60:
        return f"{seconds / 60:.3g} minutes"
    return f"{seconds:.3g} seconds"


def _size(size: int) -> str:
    return f"{size / MIB:g} MiB" if size >= MIB else f"{size:,} bytes"


@dataclass(frozen=True, slots=True)
class Answer:
    """One answer the proxy gave (see the module docstring). ``created``: wall-clock
    seconds, when it was kept."""

    id: str
    input: list[JSON]
    output: list[JSON]
    upstream: str
    passthrough: bool  # the client got the upstream's own ids
    created: float = field(default_factory=time.time)


@dataclass(frozen=True, slots=True)
class ItemHit:
    """An output item found by its id, with the answer it came from."""

    item: JSON
    answer: str  # the response id
    upstream: str
    passthrough: bool


@dataclass(slots=True)
class Found:
    """What a look-up found: answers and items by id, and for ids known to have been
    dropped, why (``gone``)."""

    answers: dict[str, Answer] = field(default_factory=dict)
    items: dict[str, ItemHit] = field(default_factory=dict)
    gone: dict[str, str] = field(default_factory=dict)

    def merge(self, other: Found) -> None:
        self.answers.update(other.answers)
        self.items.update(other.items)
        for key, why in other.gone.items():
            self.gone.setdefault(key, why)


# -- an answer as stored: items by hash ------------------------------------------------------


def blob_key(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class Packed:
    """An answer as stored: its items' keys in order, the items' bytes by key, and its
    output items' ids (id, position in ``output``)."""

    id: str
    created: float
    upstream: str
    passthrough: bool
    input: tuple[str, ...]
    output: tuple[str, ...]
    blobs: dict[str, bytes]
    item_ids: tuple[tuple[str, int], ...]


def pack(answer: Answer, mask: Mask = _plain) -> Packed:
    """``answer`` as stored, each item's JSON passed through ``mask`` (the redactor)."""
    blobs: dict[str, bytes] = {}

    def keys(items: Iterable[JSON]) -> tuple[str, ...]:
        out = []
        for item in items:
            data = mask(jsontext.dumps(item))
            key = blob_key(data)
            blobs[key] = data
            out.append(key)
        return tuple(out)

    ids = tuple(
        (item["id"], i)
        for i, item in enumerate(answer.output)
        if isinstance(item, dict) and isinstance(item.get("id"), str) and item["id"]
    )
    return Packed(
        answer.id,
        answer.created,
        answer.upstream,
        answer.passthrough,
        keys(answer.input),
        keys(answer.output),
        blobs,
        ids,
    )


def unpack(packed: Packed, blobs: Callable[[str], bytes]) -> Answer:
    return Answer(
        packed.id,
        [jsontext.loads(blobs(k)) for k in packed.input],
        [jsontext.loads(blobs(k)) for k in packed.output],
        packed.upstream,
        packed.passthrough,
        packed.created,
    )


# -- one machine's store ---------------------------------------------------------------------


@dataclass(slots=True)
class _Blob:
    data: bytes
    refs: int


class MemoryAnswers:
    """Answers in this process's memory, within :class:`Limits` (the oldest dropped first,
    and any older than the age limit). Remembers, for up to ``GONE_KEPT`` ids, why an
    answer or item it dropped is gone. Not thread-safe: the proxy's loop uses it."""

    def __init__(
        self, limits: Limits, mask: Mask = _plain, clock: Callable[[], float] = time.time
    ) -> None:
        self.limits = limits
        self._mask = mask
        self._clock = clock
        self._answers: OrderedDict[str, Packed] = OrderedDict()  # oldest first
        self._blobs: dict[str, _Blob] = {}
        # output item id -> the kept answers with it, newest last (ids rarely repeat, but
        # a replayed upstream's do)
        self._items: dict[str, list[str]] = {}
        self._gone: OrderedDict[str, str] = OrderedDict()
        self.bytes = 0  # of the distinct items kept

    def __len__(self) -> int:
        return len(self._answers)

    def keep(self, answer: Answer) -> None:
        """Keep ``answer`` (replacing one of the same id), then drop what the limits
        leave no room for."""
        self.keep_packed(pack(answer, self._mask))

    def keep_packed(self, packed: Packed) -> None:
        if packed.id in self._answers:
            self._drop(packed.id, None)
        self._gone.pop(packed.id, None)
        for key in (*packed.input, *packed.output):
            blob = self._blobs.get(key)
            if blob is None:
                data = packed.blobs[key]
                self._blobs[key] = _Blob(data, 1)
                self.bytes += len(data)
            else:
                blob.refs += 1
        self._answers[packed.id] = replace(packed, blobs={})  # (the bytes are in _blobs)
        for item_id in dict.fromkeys(i for i, _ in packed.item_ids):
            self._items.setdefault(item_id, []).append(packed.id)
            self._gone.pop(item_id, None)
        self.trim()

    def trim(self) -> None:
        """Drop the answers past the age limit, then the oldest beyond count or bytes."""
        limits = self.limits
        now = self._clock()
        while self._answers:
            oldest = next(iter(self._answers.values()))
            age = now - oldest.created
            if age > limits.max_seconds:
                self._drop(oldest.id, limits.expired(age))
            elif len(self._answers) > limits.max_answers or self.bytes > limits.max_bytes:
                self._drop(oldest.id, limits.evicted())
            else:
                break

    def _drop(self, response_id: str, why: str | None) -> None:
        packed = self._answers.pop(response_id)
        for key in (*packed.input, *packed.output):
            blob = self._blobs[key]
            blob.refs -= 1
            if blob.refs == 0:
                del self._blobs[key]
                self.bytes -= len(blob.data)
        dropped = []  # item ids no kept answer has any more
        for item_id in dict.fromkeys(i for i, _ in packed.item_ids):
            owners = self._items[item_id]
            owners.remove(response_id)
            if not owners:
                del self._items[item_id]
                dropped.append(item_id)
        if why is None:  # replaced, not gone
            return
        for key in (response_id, *dropped):
            self._gone[key] = why
            self._gone.move_to_end(key)
        while len(self._gone) > GONE_KEPT:
            self._gone.popitem(last=False)

    def packed(self, response_id: str) -> Packed | None:
        return self._answers.get(response_id)

    def find(self, response_ids: Sequence[str], item_ids: Sequence[str]) -> Found:
        """The answers and output items of these ids that are kept (past the age limit
        counts as gone), and why those known to be dropped are gone."""
        self.trim()
        found = Found()
        blob = self._blob
        for rid in response_ids:
            packed = self._answers.get(rid)
            if packed is not None:
                found.answers[rid] = unpack(packed, blob)
            elif rid in self._gone:
                found.gone[rid] = self._gone[rid]
        for item_id in item_ids:
            owners = self._items.get(item_id)
            if owners is None:
                if item_id in self._gone:
                    found.gone[item_id] = self._gone[item_id]
                continue
            owner = owners[-1]
            packed = self._answers[owner]
            at = next(i for key, i in packed.item_ids if key == item_id)
            item = jsontext.loads(blob(packed.output[at]))
            found.items[item_id] = ItemHit(item, owner, packed.upstream, packed.passthrough)
        return found

    def _blob(self, key: str) -> bytes:
        return self._blobs[key].data


__all__ = ["Answer", "Found", "ItemHit", "Limits", "MemoryAnswers", "Packed", "pack", "unpack"]
