"""``lint()`` keeps what the provider did apart (``lint/check.py``): its outcomes are
the report's own, and the marks a cut by the length limit leaves on the wire — the cut
call's arguments that never close, Anthropic's cut block never stopped — are excused by
that cut, while the same marks in a stream that did not finish by length stay errors."""

from __future__ import annotations

from streamscope.lint import lint_bytes
from tests.lint.provider_cases import ANT_CUT_CALL, CHAT_CALL
from tests.lint.streams import (
    ANT_TOOL,
    CHAT_TOOLS,
    Payload,
    chat,
    deltas,
    first,
    native,
    payloads,
    typed,
    without,
)


def _finish(items: list[Payload], reason: str) -> list[Payload]:
    for p in items:
        for c in p.get("choices") or []:
            if c.get("finish_reason"):
                c["finish_reason"] = reason
    return items


def _without_fragments(items: list[Payload], call: int, last: int) -> list[Payload]:
    """The payloads without the last ``last`` argument fragments of call ``call``."""
    frags = [
        p
        for p in items
        if any(
            c.get("index") == call and c.get("function", {}).get("arguments")
            for d in deltas([p])
            for c in d.get("tool_calls") or []
        )
    ]
    return [p for p in items if p not in frags[len(frags) - last :]]


def test_a_call_cut_by_length_is_the_providers_and_a_broken_call_is_the_wires() -> None:
    cut = _without_fragments(payloads(CHAT_CALL), 0, 2)
    broken = lint_bytes(chat(cut))  # it finished by tool_calls: the call is broken
    assert {f.rule_id for f in broken.errors} == {"stream.truncated-tool-json"}
    assert broken.outcomes == []
    by_length = lint_bytes(chat(_finish(cut, "length")))
    assert by_length.errors == []
    (outcome,) = by_length.outcomes
    assert outcome.rule_id == "provider.length-in-tool-call"
    (excused,) = [f for f in by_length.findings if f.rule_id == "stream.truncated-tool-json"]
    assert excused.excused == outcome.message and excused.clients == {}


def test_only_the_call_the_limit_cut_is_excused() -> None:
    """Two calls: the first broken mid-stream, the last cut by the limit."""
    items = _without_fragments(payloads(CHAT_TOOLS), 0, 3)
    items = _finish(_without_fragments(items, 1, 2), "length")
    report = lint_bytes(chat(items))
    # (one finding per rule and frame: both calls end at the finish, the first is named)
    (broken,) = [f for f in report.findings if f.rule_id == "stream.truncated-tool-json"]
    assert "'GetWeatherArgs'" in broken.message and not broken.excused
    assert report.errors == [broken]
    assert "`get_stock_price`" in report.outcomes[0].message


def test_anthropics_cut_block_is_excused_only_at_max_tokens() -> None:
    real = lint_bytes(native(ANT_CUT_CALL).rstrip(b"\n") + b"\n\n")  # as the API sends it
    assert real.errors == [] and [f.rule_id for f in real.outcomes] == [
        "provider.length-in-tool-call"
    ]
    assert {f.rule_id for f in real.findings if f.excused} == {
        "anthropic.block-order",
        "stream.truncated-tool-json",
    }
    # the same block never stopped in an answer that ended by end_turn: a broken wire
    items = without(payloads(ANT_TOOL), "content_block_stop")
    first(items, "message_delta")["delta"]["stop_reason"] = "end_turn"
    assert "anthropic.block-order" in {f.rule_id for f in lint_bytes(typed(items)).errors}
    first(items, "message_delta")["delta"]["stop_reason"] = "max_tokens"
    cut = lint_bytes(typed(items))
    assert cut.errors == [] and cut.outcomes[0].rule_id == "provider.length"


def test_the_verdict_of_a_cut_says_what_happened_and_exits_no_error() -> None:
    report = lint_bytes(native(ANT_CUT_CALL).rstrip(b"\n") + b"\n\n")
    said = "the answer was cut by `max_tokens` inside the arguments of tool call `make_file`"
    assert report.headline().startswith(f"{said}, at frame 14; ")
    verdicts = report.verdicts()
    assert verdicts["cherry-anthropic"].startswith(f"{said}, at frame 14; Cherry Studio")
    assert "drops that call" in verdicts["cherry-anthropic"]
    assert "Claude Code asks the model to resume" in verdicts["claude-code"]
