"""A Responses request's references to earlier answers, resolved: :func:`resolve`.

Pure: the request's JSON, what the store found (:class:`~streamscope.conversation.answers.
Found`) and the route's upstream (:class:`Target`) in; two bodies and notes out:

- ``decoded``: the whole conversation, every ``item_reference`` replaced by the item as
  the client got it and ``previous_response_id`` expanded into that answer's input and
  output items before ``input``: what the codec's decoder reads, so a translated
  upstream gets the full conversation;
- ``body``: what the upstream is sent. For a Responses upstream that keeps its own
  answers, a reference (and ``previous_response_id``) whose answer came from that same
  upstream in passthrough (the client saw the upstream's own ids) goes as it was sent,
  and so does an id the proxy does not know (it may be the upstream's from before this
  proxy's memory). Anything else is replaced by the stored item with nothing the
  upstream cannot know: no proxy-made id where the API makes it optional (messages,
  function calls), no reasoning item it cannot read (one without ``encrypted_content``
  of its own). Every other upstream (translated, or the demo) gets ``decoded``;
- ``notes``: (field, why, what went instead) for each change made for the upstream.

An id that must be resolved and cannot be gets the Responses API's own error: 404
``Item with id '…' not found.`` (``param: input``) for an item, 400
``previous_response_not_found`` (``param: previous_response_id``) for an answer, each
saying why here (never kept, dropped for age or room, and what this proxy keeps).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from streamscope.conversation.answers import JSON, Found, Limits
from streamscope.model.errors import ProxyError, bad_request

Note = tuple[str, str, str]  # (field, why it changed, what went instead)


@dataclass(frozen=True, slots=True)
class Target:
    """The upstream a request is routed to: its name, the protocol it is asked in, and
    whether it keeps Responses answers of its own (a Responses upstream; not the demo)."""

    upstream: str
    protocol: str
    keeps_state: bool

    def cannot(self) -> str:
        if self.keeps_state:
            return f"upstream {self.upstream!r} did not hand it out"
        if self.protocol == "responses":  # the demo: it answers in the client's protocol
            return f"upstream {self.upstream!r} keeps no answers to look it up in"
        return f"upstream {self.upstream!r} ({self.protocol}) has no such ids"


@dataclass(slots=True)
class Resolution:
    body: JSON  # for the upstream
    decoded: JSON  # for the decoder: the whole conversation
    notes: list[Note] = field(default_factory=list)


def is_reference(item: Any) -> bool:
    """An ``item_reference`` input item (its ``type`` is optional in the API)."""
    if not isinstance(item, dict):
        return False
    kind = item.get("type")
    return kind == "item_reference" or (kind is None and "role" not in item and "id" in item)


def wanted(body: JSON) -> tuple[list[str], str | None]:
    """The item ids ``body``'s input refers to, and its ``previous_response_id``: what to
    look up (nothing malformed: :func:`resolve` says what is)."""
    items = body.get("input")
    refs = (
        [i["id"] for i in items if is_reference(i) and isinstance(i.get("id"), str)]
        if isinstance(items, list)
        else []
    )
    previous = body.get("previous_response_id")
    return refs, previous if isinstance(previous, str) else None


def _as_items(value: str | list[Any] | None) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str):
        return [{"role": "user", "content": value}]
    return list(value)


def item_not_found(item_id: str, why: str) -> ProxyError:
    return ProxyError(
        404, f"Item with id {item_id!r} not found. {why}.", "invalid_request_error", None, "input"
    )


def previous_not_found(response_id: str, why: str) -> ProxyError:
    return ProxyError(
        400,
        f"Previous response with id {response_id!r} not found. {why}.",
        "invalid_request_error",
        "previous_response_not_found",
        "previous_response_id",
    )


def _why_unknown(key: str, found: Found, limits: Limits, target: Target) -> str:
    known = found.gone.get(key)
    head = (
        known
        if known is not None
        else f"It is not among this proxy's answers ({limits.describe()})"
    )
    return f"{head[0].upper()}{head[1:]}; {target.cannot()}"


def resolve(body: JSON, found: Found, target: Target, limits: Limits) -> Resolution:
    """See the module docstring. Raises ``ProxyError``: the API's not-found errors, and a
    400 for a reference or ``previous_response_id`` that is not a string."""
    previous = body.get("previous_response_id")
    if previous is not None and not isinstance(previous, str):
        raise bad_request("previous_response_id must be a string", "previous_response_id")
    raw = body.get("input")
    if raw is not None and not isinstance(raw, (str, list)):
        return Resolution(body, body)  # (the decoder says what input must be)
    refs = [i for i, item in enumerate(raw) if is_reference(item)] if isinstance(raw, list) else []
    if previous is None and not refs:
        return Resolution(body, body)
    notes: list[Note] = []
    sent: list[Any] = []  # the upstream's input
    whole: list[Any] = []  # the decoder's
    for i, item in enumerate(_as_items(raw)):
        if not is_reference(item):
            sent.append(item)
            whole.append(item)
            continue
        item_id = item.get("id")
        if not isinstance(item_id, str):
            raise bad_request(f"input[{i}].id must be a string", f"input[{i}].id")
        hit = found.items.get(item_id)
        if hit is None:
            if not target.keeps_state:
                raise item_not_found(item_id, _why_unknown(item_id, found, limits, target))
            sent.append(item)  # maybe the upstream's own, from before this proxy's memory
            continue
        whole.append(hit.item)
        if target.keeps_state and hit.passthrough and hit.upstream == target.upstream:
            sent.append(item)  # the upstream's own id
            continue
        what = "the item as the client got it"  # (the decoder's, translated)
        if target.keeps_state:
            own, what = _for_upstream(hit.item, hit.upstream, target)
            if own is not None:
                sent.append(own)
        origin = f"answer {hit.answer} (upstream {hit.upstream!r})"
        notes.append(
            (
                f"input[{i}]",
                f"item_reference {item_id!r} names an item of this proxy's {origin};"
                f" {target.cannot()}",
                what,
            )
        )
    decoded = {**body, "input": whole}
    upstream = {**body, "input": sent} if target.keeps_state else decoded
    if previous is not None:
        _previous(previous, found, target, limits, decoded, upstream, notes)
    if isinstance(raw, str) and upstream.get("input") == [{"role": "user", "content": raw}]:
        upstream["input"] = raw  # (nothing was added before it: as it was sent)
    if raw is None and upstream is not decoded and upstream.get("input") == []:
        del upstream["input"]  # (none was sent, and nothing was added)
    return Resolution(upstream, decoded, notes)


def _previous(
    previous: str,
    found: Found,
    target: Target,
    limits: Limits,
    decoded: JSON,
    upstream: JSON,
    notes: list[Note],
) -> None:
    """``previous_response_id`` kept or expanded, in both bodies (changed in place)."""
    answer = found.answers.get(previous)
    if answer is None:
        if not target.keeps_state:
            raise previous_not_found(previous, _why_unknown(previous, found, limits, target))
        del decoded["previous_response_id"]  # (the upstream's to resolve: sent as it was)
        return
    before = [*answer.input, *answer.output]
    del decoded["previous_response_id"]
    decoded["input"] = before + decoded["input"]
    if target.keeps_state and answer.passthrough and answer.upstream == target.upstream:
        return  # its own answer: previous_response_id goes as it was sent
    if upstream is decoded:
        sent: list[Any] = before
        left: list[str] = []
    else:
        del upstream["previous_response_id"]
        sent, left = [], []
        for item in before:
            if not isinstance(item, dict) or "id" not in item:
                sent.append(item)
                continue
            own, what = _for_upstream(item, answer.upstream, target)
            if own is None:
                left.append(str(item.get("type")))
            else:
                sent.append(own)
        upstream["input"] = sent + upstream["input"]
    instead = (
        f"the {len(sent)} items of the conversation up to it (its input and output) before input"
    )
    if left:
        instead += f"; left out: {', '.join(left)} (items upstream {target.upstream!r} cannot read)"
    notes.append(
        (
            "previous_response_id",
            f"{previous!r} is an answer of this proxy's (upstream {answer.upstream!r});"
            f" {target.cannot()}",
            instead,
        )
    )


def _input_part(part: Any) -> Any:
    """An output message's content part as input takes it (text, no annotations)."""
    if isinstance(part, dict) and part.get("type") == "output_text":
        return {"type": "output_text", "text": part.get("text", "")}
    if isinstance(part, dict) and part.get("type") == "refusal":
        return {"type": "refusal", "refusal": part.get("refusal", "")}
    return part


def _for_upstream(item: JSON, origin: str, target: Target) -> tuple[JSON | None, str]:
    """A stored item as a Responses upstream may be sent it (None: it cannot be), and
    what went instead, in words."""
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "message":
        content = item.get("content")
        parts = [_input_part(p) for p in content] if isinstance(content, list) else content
        own = {"type": "message", "role": item.get("role", "assistant"), "content": parts}
        return own, "the item as the client got it, without its id"
    if kind == "function_call":
        own = {k: v for k, v in item.items() if k not in ("id", "status")}
        return own, "the function call as the client got it, without its id"
    if kind == "reasoning":
        sealed = item.get("encrypted_content")
        if isinstance(sealed, str) and sealed and origin == target.upstream:
            own = {"type": "reasoning", "summary": item.get("summary") or []}
            own["encrypted_content"] = sealed
            return own, "the reasoning item with its encrypted_content, without its id"
        return None, (
            "nothing: a reasoning item cannot be sent without its id unless it carries"
            f" encrypted_content of upstream {target.upstream!r}"
        )
    if origin == target.upstream:
        return item, "the item as the client got it"
    return None, f"nothing: a {kind} item of upstream {origin!r} means nothing to this one"


__all__ = [
    "Note",
    "Resolution",
    "Target",
    "is_reference",
    "item_not_found",
    "previous_not_found",
    "resolve",
    "wanted",
]
