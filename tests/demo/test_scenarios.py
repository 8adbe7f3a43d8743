"""The demo scenarios (``play``): what each says, its timing, and how the driver applies
``max_tokens`` and ``n`` to all of them. Pure functions: no sockets, no sleeping."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.demo.scenarios import SCENARIOS, Said, Timing, play, steps
from streamscope.model.assemble import assemble
from streamscope.model.events import (
    End,
    Error,
    Finish,
    MessageStart,
    ReasoningDelta,
    ReasoningSignature,
    RefusalDelta,
    TextDelta,
    ToolCallStart,
    Usage,
)
from streamscope.model.request import Message, Request, TextPart
from streamscope.model.response import ReasoningOut, TextOut
from tests.demo.scenario_support import (
    CONTENT,
    FORECAST,
    PER_TOKEN,
    QUESTION,
    SEARCH,
    TIMING,
    check_calls,
    content_counts,
    finishes,
    req,
    run,
)

# -- what each scenario says -----------------------------------------------------------------


def test_chat_quotes_the_last_user_message_with_usage() -> None:
    request = Request(
        "demo-chat",
        [
            Message("user", [TextPart("first question")]),
            Message("assistant", [TextPart("an answer")]),
            Message("user", [TextPart("second "), TextPart("question")]),
        ],
    )
    steps = play("demo-chat", request, TIMING)
    response = assemble(s.event for s in steps)
    [choice] = response.choices
    assert choice.text == 'You said: "second question". This is the StreamScope demo backend.'
    assert choice.finish == "stop" and choice.reasoning == "" and choice.tool_calls == []
    deltas = [s.event.text for s in steps if isinstance(s.event, TextDelta)]
    assert len(deltas) == len(choice.text.split(" ")) and "".join(deltas) == choice.text
    assert response.usage is not None
    assert response.usage.output_tokens == len(deltas)
    assert response.usage.input_tokens is not None and response.usage.input_tokens >= 4
    assert response.model == "demo-chat" and response.error is None
    assert run("demo-chat", request).choices[0].text == choice.text  # deterministic


def test_chat_without_a_user_message() -> None:
    assert run("demo-chat", Request("demo-chat")).choices[0].text.startswith('You said: "nothing"')


def test_every_scenario_is_framed_by_start_usage_and_end() -> None:
    for name in SCENARIOS:
        steps = play(name, req(name), TIMING)
        first = steps[0]
        assert isinstance(first.event, MessageStart) and first.delay == 0
        assert first.event.model == name and first.event.id.startswith("demo-")
        if name == "demo-error":
            continue
        assert [type(s.event) for s in steps[-2:]] == [Usage, End], name
        assert finishes(steps).keys() == {0}, name


def test_unknown_scenario_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        play("demo-nope", req("demo-nope"), TIMING)


def test_reasoning_comes_first_signed_then_text() -> None:
    steps = play("demo-reasoning", req("demo-reasoning"), TIMING)
    kinds = [type(s.event) for s in steps if isinstance(s.event, CONTENT + (ReasoningSignature,))]
    sig_at = kinds.index(ReasoningSignature)
    assert set(kinds[:sig_at]) == {ReasoningDelta} and set(kinds[sig_at + 1 :]) == {TextDelta}
    response = assemble(s.event for s in steps)
    reasoning, text = response.choices[0].parts
    assert isinstance(reasoning, ReasoningOut) and isinstance(text, TextOut)
    assert QUESTION in reasoning.text and text.text
    assert reasoning.signature is not None and reasoning.signature.startswith("demo-sig-")
    assert len(reasoning.signature) > len("demo-sig-") + 8
    assert run("demo-reasoning", req("demo-reasoning")).choices[0].parts[0] == reasoning
    other = run("demo-reasoning", req("demo-reasoning", "Something else?")).choices[0].parts[0]
    assert isinstance(other, ReasoningOut) and other.signature != reasoning.signature
    assert response.choices[0].finish == "stop"
    assert response.usage is not None
    assert response.usage.reasoning_tokens == kinds.count(ReasoningDelta)
    assert response.usage.output_tokens == len(kinds) - 1


def test_refusal() -> None:
    steps = play("demo-refusal", req("demo-refusal"), TIMING)
    assert not any(isinstance(s.event, TextDelta) for s in steps)
    assert sum(isinstance(s.event, RefusalDelta) for s in steps) > 3
    choice = assemble(s.event for s in steps).choices[0]
    assert choice.refusal.startswith("I'm sorry") and choice.text == ""
    assert choice.finish == "refusal"


@pytest.mark.parametrize("long_tokens", [7, 40, 123])
def test_long_answer_has_long_tokens_at_a_steady_rate(long_tokens: int) -> None:
    timing = Timing(tokens_per_second=25.0, first_token_seconds=0.1, long_tokens=long_tokens)
    steps = play("demo-long", req("demo-long"), timing)
    content = [s for s in steps if isinstance(s.event, CONTENT)]
    assert len(content) == long_tokens
    assert content[0].delay == pytest.approx(0.1)
    assert [s.delay for s in content[1:]] == pytest.approx([1 / 25.0] * (long_tokens - 1))
    text = run("demo-long", req("demo-long"), timing).choices[0].text
    assert len(text.split(" ")) == long_tokens and text.startswith("A stream is a promise")


def test_slow_waits_slow_seconds_before_the_first_content() -> None:
    steps = play("demo-slow", req("demo-slow"), TIMING)
    first = next(i for i, s in enumerate(steps) if isinstance(s.event, CONTENT))
    assert [s.delay for s in steps[:first]] == [0.0] * first
    assert steps[first].delay == pytest.approx(TIMING.slow_seconds)
    later = [s.delay for s in steps[first + 1 :] if isinstance(s.event, CONTENT)]
    assert later and later == pytest.approx([PER_TOKEN] * len(later))
    assert run("demo-slow", req("demo-slow")).choices[0].finish == "stop"


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_timing_every_scenario(name: str) -> None:
    """The first output (content, or a tool call's start) after the first-token delay,
    then content per token; everything else at once."""
    steps = play(name, req(name, max_tokens=30), TIMING)
    first_delay = TIMING.slow_seconds if name == "demo-slow" else TIMING.first_token_seconds
    seen_content = seen_output = False
    for s in steps:
        if isinstance(s.event, CONTENT):
            assert s.delay == pytest.approx(PER_TOKEN if seen_output else first_delay)
            seen_content = seen_output = True
        elif isinstance(s.event, ToolCallStart) and not seen_output:
            assert s.delay == pytest.approx(first_delay)
            seen_output = True
        elif isinstance(s.event, Error):
            assert s.delay == pytest.approx(PER_TOKEN)
        else:
            assert s.delay == 0.0, s
    assert seen_content


def test_error_after_a_few_tokens_and_nothing_after() -> None:
    steps = play("demo-error", req("demo-error"), TIMING)
    assert isinstance(steps[-1].event, Error)
    assert not any(isinstance(s.event, Finish | Usage | End) for s in steps)
    deltas = [s for s in steps if isinstance(s.event, TextDelta)]
    assert 2 <= len(deltas) <= 10
    error = steps[-1].event
    assert error.error_type == "api_error" and error.code == "demo_error"
    assert f"after {len(deltas)} tokens" in error.message
    response = assemble(s.event for s in steps)
    assert response.error == error and response.choices[0].finish is None
    assert response.choices[0].text == "This answer will break off after"


@pytest.mark.parametrize(
    ("max_tokens", "tokens", "finish"), [(None, 16, "length"), (5, 5, "length"), (1000, 72, "stop")]
)
def test_length_stops_at_max_tokens(max_tokens: int | None, tokens: int, finish: str) -> None:
    steps = play("demo-length", req("demo-length", max_tokens=max_tokens), TIMING)
    assert content_counts(steps) == {0: tokens}
    assert finishes(steps) == {0: finish}
    response = assemble(s.event for s in steps)
    assert len(response.choices[0].text.split(" ")) == tokens
    assert response.usage is not None and response.usage.output_tokens == tokens


# -- n and max_tokens, for every scenario ----------------------------------------------------


def request_for(name: str, **kw: Any) -> Request:
    return req(name, tools=[FORECAST, SEARCH] if name == "demo-tools" else [], **kw)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_n_choices(name: str) -> None:
    steps = play(name, request_for(name, n=3), TIMING)
    counts = content_counts(steps)
    assert sorted(counts) == [0, 1, 2]
    response = assemble(s.event for s in steps)
    assert [c.index for c in response.choices] == [0, 1, 2]
    single = run(name, request_for(name))
    if name == "demo-error":
        assert isinstance(steps[-1].event, Error) and finishes(steps) == {}
        assert sum(isinstance(s.event, Error) for s in steps) == 1
        return
    assert finishes(steps) == {i: single.choices[0].finish for i in range(3)}
    assert response.usage is not None and response.usage.output_tokens == sum(counts.values())
    if name == "demo-tools":
        check_calls(steps, [FORECAST, SEARCH])
    elif name == "demo-chat":
        assert response.choices[0].text == single.choices[0].text
        assert response.choices[2].text.startswith("(choice 3) You said:")
    else:
        assert {c.text + c.refusal + c.reasoning for c in response.choices} == {
            single.choices[0].text + single.choices[0].refusal + single.choices[0].reasoning
        }


def said(choice: Any) -> list[str]:
    return [
        choice.text,
        choice.reasoning,
        choice.refusal,
        *(c.arguments for c in choice.tool_calls),
    ]


@settings(max_examples=120, deadline=None)
@given(name=st.sampled_from(sorted(SCENARIOS)), budget=st.integers(1, 40), n=st.integers(1, 3))
def test_max_tokens_is_honoured(name: str, budget: int, n: int) -> None:
    full = play(name, request_for(name, max_tokens=10**6, n=n), TIMING)
    cut = play(name, request_for(name, max_tokens=budget, n=n), TIMING)
    full_counts, counts, full_finish = content_counts(full), content_counts(cut), finishes(full)
    cut_finish = finishes(cut)
    for c in range(n):
        assert counts[c] == min(budget, full_counts[c])
        if full_counts[c] > budget:
            assert cut_finish[c] == "length"
        else:
            assert cut_finish.get(c) == full_finish.get(c)
    whole, part = assemble(s.event for s in full), assemble(s.event for s in cut)
    for a, b in zip(whole.choices, part.choices, strict=True):
        assert all(x.startswith(y) for x, y in zip(said(a), said(b), strict=False))
    if part.error is None:
        assert isinstance(cut[-1].event, End)
        assert part.usage is not None and part.usage.output_tokens == sum(counts.values())
    else:
        assert isinstance(cut[-1].event, Error) and cut_finish == {}


def test_a_single_choice_is_made_as_it_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo streams on the proxy's loop (in the app, the GUI's): making a 20,000-token
    answer before its first byte was a visible stall. One choice's events are read from
    the scenario only as the steps are."""
    read: list[int] = []

    def counted(request: Request, choice: int, timing: Timing) -> Said:
        def events() -> Any:
            for i in range(1000):
                read.append(i)
                yield TextDelta(f" t{i}", choice)

        return Said(events())

    monkeypatch.setitem(SCENARIOS, "demo-counted", counted)
    played = steps("demo-counted", req("demo-counted"), TIMING)
    assert isinstance(next(played).event, MessageStart) and read == []
    assert next(played).event == TextDelta(" t0", 0) and read == [0]
    rest = list(played)
    assert len(read) == 1000
    assert [type(s.event) for s in rest[-3:]] == [Finish, Usage, End]
    assert rest[-2].event.output_tokens == 1000


def test_an_unknown_scenario_fails_before_any_step_is_read() -> None:
    with pytest.raises(KeyError):
        steps("demo-nope", req("demo-nope"), TIMING)
