"""OpenAI Responses checks the decoder does not make (or makes once per stream): item ids
and sequence numbers on every event, the indexes deltas are placed by,
``response.in_progress``, content parts before their deltas, ``annotations``, the full
response object, function_call fields, every item done, usage, error framing and LM
Studio's non-standard reasoning events."""

from __future__ import annotations

from typing import Any

from streamscope.lint.stream import JSON, Hit, Observed, counted

_CONTENT_EVENTS = frozenset(
    "response.content_part.added response.content_part.done response.output_text.done "
    "response.output_text.annotation.added response.refusal.delta response.refusal.done "
    "response.reasoning_summary_part.added response.reasoning_summary_part.done "
    "response.reasoning_summary_text.delta response.reasoning_summary_text.done "
    "response.reasoning_text.delta response.reasoning_text.done "
    "response.function_call_arguments.delta response.function_call_arguments.done".split()
)
_TEXT_DELTA = "response.output_text.delta"
_LIFECYCLE = (
    "response.created",
    "response.in_progress",
    "response.completed",
    "response.incomplete",
    "response.failed",
)
_TERMINAL = ("response.completed", "response.incomplete", "response.failed")
_SETTINGS = ("tools", "tool_choice", "text", "reasoning", "parallel_tool_calls", "metadata")


_PLACED_BY = {
    _TEXT_DELTA: ("output_index", "content_index"),
    "response.function_call_arguments.delta": ("output_index",),
}
"""The deltas openai-python's accumulator places by index, and the indexes it reads."""


def check(obs: Observed) -> list[Hit]:
    return [
        *item_ids(obs),
        *delta_indexes(obs),
        *sequence_numbers(obs),
        *in_progress(obs),
        *lifecycle_fields(obs),
        *content_parts(obs),
        *part_annotations(obs),
        *response_object(obs),
        *function_calls(obs),
        *items_done(obs),
        *usage_fields(obs),
        *error_framing(obs),
        *reasoning_text(obs),
    ]


_CALL_EVENTS = ("response.function_call_arguments.delta", "response.function_call_arguments.done")


def item_ids(obs: Observed) -> list[Hit]:
    deltas = [i for i, p in obs.of_type(_TEXT_DELTA) if not isinstance(p.get("item_id"), str)]
    other = [i for i, p in obs.of_type(*_CONTENT_EVENTS) if not isinstance(p.get("item_id"), str)]
    # the AI SDK rejects function call argument events without item_id (measured)
    calls = [i for i, p in obs.of_type(*_CALL_EVENTS) if not isinstance(p.get("item_id"), str)]
    other = [i for i in other if i not in calls]
    return (
        counted("responses.missing-item-id", deltas, "response.output_text.delta without item_id")
        + counted("responses.call-event-without-item-id", calls, "arguments event without item_id")
        + counted("responses.content-event-without-item-id", other, "content event without item_id")
    )


def _is_index(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _missing_indexes(p: JSON) -> list[str]:
    kind = p.get("type")
    needed = _PLACED_BY.get(kind, ()) if isinstance(kind, str) else ()
    return [k for k in needed if not _is_index(p.get(k))]


def delta_indexes(obs: Observed) -> list[Hit]:
    bad: list[int] = []
    missing: dict[str, None] = {}
    for index, p in obs.of_type(*_PLACED_BY):
        keys = _missing_indexes(p)
        if keys:
            bad.append(index)
            missing.update(dict.fromkeys(f"{p['type']} without {k}" for k in keys))
    return counted("responses.delta-without-index", bad, "; ".join(missing))


def _has_seq(p: JSON) -> bool:
    seq = p.get("sequence_number")
    return isinstance(seq, int) and not isinstance(seq, bool)


def sequence_numbers(obs: Observed) -> list[Hit]:
    failing = [
        Hit(
            "responses.error-without-sequence-number", i, f"{p.get('type')} without sequence_number"
        )
        for i, p in obs.of_type("error", "response.failed")
        if not _has_seq(p)
    ]
    others = [i for i, p in obs.payloads if not _has_seq(p)]
    return failing + counted(
        "responses.missing-sequence-number", others, "events without sequence_number"
    )


def in_progress(obs: Observed) -> list[Hit]:
    if any(True for _ in obs.of_type("response.in_progress")):
        return []
    return [Hit("responses.missing-in-progress", None, "no response.in_progress event")]


def _response(p: JSON) -> JSON:
    resp = p.get("response")
    return resp if isinstance(resp, dict) else {}


def lifecycle_fields(obs: Observed) -> list[Hit]:
    hits: list[Hit] = []
    for index, p in obs.of_type("response.created"):
        resp = _response(p)
        missing = [k for k in ("id", "model") if not isinstance(resp.get(k), str)]
        created = resp.get("created_at")
        if not isinstance(created, int | float) or isinstance(created, bool):
            missing.append("created_at")
        if missing:
            hits.append(
                Hit(
                    "responses.lifecycle-fields",
                    index,
                    f"response.created without {', '.join(missing)}",
                )
            )
    return hits


def _key(p: JSON) -> Any:
    # By output_index first: some gateways (GitHub Copilot) rotate item ids.
    idx = p.get("output_index")
    return ("index", idx) if isinstance(idx, int) else ("id", p.get("item_id"))


def content_parts(obs: Observed) -> list[Hit]:
    parts: set[tuple[Any, Any]] = set()
    early: list[int] = []
    for index, p in obs.payloads:
        part = (_key(p), p.get("content_index", 0))
        if p.get("type") == "response.content_part.added":
            parts.add(part)
        elif p.get("type") == _TEXT_DELTA and part not in parts and not _missing_indexes(p):
            early.append(index)  # (a delta without its indexes: delta_indexes() says so)
    return counted(
        "responses.delta-before-content-part",
        early,
        "output_text.delta before the content_part.added of its part",
    )


def _output_text_parts(p: JSON) -> list[JSON]:
    parts: list[Any] = [p["part"]] if isinstance(p.get("part"), dict) else []
    items: list[Any] = [p["item"]] if isinstance(p.get("item"), dict) else []
    output = _response(p).get("output")
    items += output if isinstance(output, list) else []
    for item in items:
        content = item.get("content") if isinstance(item, dict) else None
        parts += content if isinstance(content, list) else []
    return [x for x in parts if isinstance(x, dict) and x.get("type") == "output_text"]


def part_annotations(obs: Observed) -> list[Hit]:
    bad = [
        i
        for i, p in obs.payloads
        if any("annotations" not in part for part in _output_text_parts(p))
    ]
    return counted("responses.missing-annotations", bad, "output_text part without annotations")


def response_object(obs: Observed) -> list[Hit]:
    hits: list[Hit] = []
    for index, p in obs.of_type("response.created", "response.completed"):
        missing = [k for k in _SETTINGS if k not in _response(p)]
        if missing:
            hits.append(
                Hit(
                    "responses.partial-response-object",
                    index,
                    f"{p.get('type')} response lacks {', '.join(missing)}",
                )
            )
    return hits


def function_calls(obs: Observed) -> list[Hit]:
    hits: list[Hit] = []
    for index, p in obs.of_type("response.output_item.added", "response.output_item.done"):
        item = p.get("item")
        if not isinstance(item, dict) or item.get("type") != "function_call":
            continue
        # (a call that never gets a name is stream.tool-call-without-name's: clients do
        # other things with it than with a call without its call_id)
        need: tuple[str, ...] = ("call_id", "arguments")
        if p["type"] == "response.output_item.done":
            need += ("status",)
        missing = [k for k in need if not isinstance(item.get(k), str)]
        if missing:
            hits.append(
                Hit(
                    "responses.function-call-fields",
                    index,
                    f"function_call item without {', '.join(missing)}",
                )
            )
    return hits


def items_done(obs: Observed) -> list[Hit]:
    """Items added and never done, in a stream that reached its end: in one cut before
    it, what is unfinished is the cut's (``responses.missing-terminal`` says it), and the
    clients that raise on an unfinished item raise only at that end."""
    if next(obs.of_type(*_TERMINAL), None) is None:
        return []
    added: dict[Any, tuple[int, Any]] = {}
    for index, p in obs.of_type("response.output_item.added"):
        item = p.get("item")
        added[p.get("output_index")] = (index, item.get("id") if isinstance(item, dict) else None)
    for _, p in obs.of_type("response.output_item.done"):
        added.pop(p.get("output_index"), None)
    final_ids = set()
    for _, p in obs.of_type(*_LIFECYCLE):
        output = _response(p).get("output")
        for item in output if isinstance(output, list) else []:
            if isinstance(item, dict):
                final_ids.add(item.get("id"))
    return [
        Hit("responses.item-not-done", index, f"output item {out_index} is never done")
        for out_index, (index, item_id) in added.items()
        if item_id not in final_ids
    ]


def usage_fields(obs: Observed) -> list[Hit]:
    hits: list[Hit] = []
    for index, p in obs.of_type("response.completed"):
        usage = _response(p).get("usage")
        ok = isinstance(usage, dict) and all(
            isinstance(usage.get(k), int | float) for k in ("input_tokens", "output_tokens")
        )
        if not ok:
            hits.append(
                Hit(
                    "responses.usage-fields", index, "response.completed without usage token counts"
                )
            )
    return hits


def error_framing(obs: Observed) -> list[Hit]:
    bad = [i for i, p in obs.payloads if "type" not in p and "error" in p]
    return counted("responses.error-framing", bad, 'an error payload without "type": "error"')


def reasoning_text(obs: Observed) -> list[Hit]:
    frames = [
        i for i, _ in obs.of_type("response.reasoning_text.delta", "response.reasoning_text.done")
    ]
    return counted("responses.nonstandard-reasoning", frames, "response.reasoning_text events")
