"""The in-memory store of the proxy's recent Responses answers: what it gives back is what
it was given, its bounds (count, age, bytes) hold, items shared by answers are kept once,
and a dropped id says why it is gone."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.conversation.answers import (
    GONE_KEPT,
    Answer,
    Limits,
    MemoryAnswers,
    blob_key,
    pack,
)
from streamscope.wire import jsontext
from tests.support import Clock


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def message(item_id: str, text: str) -> dict[str, Any]:
    return {
        "id": item_id,
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def answer(n: int, clock: Clock, history: list[dict[str, Any]] | None = None) -> Answer:
    return Answer(
        f"resp_{n}",
        [*(history or []), user(f"question {n}")],
        [message(f"msg_{n}", f"answer {n}")],
        "up",
        False,
        clock.now,
    )


def test_an_answer_and_its_items_come_back_as_kept() -> None:
    clock = Clock(1_000_000.0)
    store = MemoryAnswers(Limits(), clock=clock)
    kept = Answer(
        "resp_a",
        [user("hi"), {"type": "function_call_output", "call_id": "c1", "output": "42"}],
        [
            {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "sealed"},
            message("msg_1", "hello"),
            {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "c2",
                "name": "f",
                "arguments": "{}",
            },
            {"type": "web_search_call", "status": "completed"},  # no id: not findable by one
        ],
        "anthropic-up",
        True,
        clock.now,
    )
    store.keep(kept)
    found = store.find(["resp_a", "resp_missing"], ["msg_1", "fc_1", "rs_1", "msg_missing"])
    assert found.answers == {"resp_a": kept}
    assert {k: v.item for k, v in found.items.items()} == {
        "msg_1": kept.output[1],
        "fc_1": kept.output[2],
        "rs_1": kept.output[0],
    }
    hit = found.items["msg_1"]
    assert (hit.answer, hit.upstream, hit.passthrough) == ("resp_a", "anthropic-up", True)
    assert found.gone == {}  # never kept: no reason known


def test_the_oldest_answers_go_first_beyond_the_count() -> None:
    clock = Clock(1_000_000.0)
    store = MemoryAnswers(Limits(max_answers=3), clock=clock)
    for n in range(5):
        store.keep(answer(n, clock))
    assert len(store) == 3
    found = store.find([f"resp_{n}" for n in range(5)], ["msg_0", "msg_4"])
    assert sorted(found.answers) == ["resp_2", "resp_3", "resp_4"]
    assert set(found.items) == {"msg_4"}
    assert "dropped to make room" in found.gone["resp_0"]
    assert "at most 3 answers" in found.gone["msg_0"]


def test_answers_past_the_age_limit_are_gone_and_say_so() -> None:
    clock = Clock(1_000_000.0)
    store = MemoryAnswers(Limits(max_seconds=3600), clock=clock)
    store.keep(answer(1, clock))
    clock.now += 1800
    store.keep(answer(2, clock))
    clock.now += 2000  # the first is 3,800 s old, the second 2,000 s
    found = store.find(["resp_1", "resp_2"], ["msg_1"])
    assert list(found.answers) == ["resp_2"]
    assert found.gone["resp_1"].startswith("it was answered 1.06 hours ago")
    assert "keeps answers for 1 hours" in found.gone["msg_1"]
    assert len(store) == 1


def test_items_shared_by_answers_are_kept_once_and_freed_with_the_last() -> None:
    clock = Clock(1_000_000.0)
    store = MemoryAnswers(Limits(), clock=clock)
    history = [user("a long first question " * 50), message("msg_0", "a long answer " * 50)]
    store.keep(answer(1, clock, history))
    one = store.bytes
    store.keep(answer(2, clock, history))  # the same history again, and a new question
    second = pack(answer(2, clock, history))
    fresh = sum(len(second.blobs[k]) for k in (second.input[-1], second.output[0]))
    assert store.bytes == one + fresh  # only what is new
    store.keep(answer(1, clock, [user("replaced")]))  # the same id again: replaced
    found = store.find(["resp_1", "resp_2"], [])
    assert found.answers["resp_1"].input == [user("replaced"), user("question 1")]
    assert found.answers["resp_2"].input[:2] == history


def test_an_answer_bigger_than_the_byte_limit_is_not_kept_and_says_why() -> None:
    clock = Clock(1_000_000.0)
    store = MemoryAnswers(Limits(max_bytes=500), clock=clock)
    store.keep(answer(1, clock, [user("x" * 600)]))
    assert len(store) == 0 and store.bytes == 0
    assert "within 500 bytes" in store.find(["resp_1"], []).gone["resp_1"]


def test_what_is_kept_passes_the_mask() -> None:
    clock = Clock(1_000_000.0)
    store = MemoryAnswers(Limits(), lambda b: b.replace(b"sk-secret", b"*****cret"), clock)
    store.keep(
        Answer("resp_m", [user("my key is sk-secret")], [message("msg_m", "ok")], "up", False)
    )
    assert store.find(["resp_m"], []).answers["resp_m"].input == [user("my key is *****cret")]


def test_the_reasons_remembered_are_bounded() -> None:
    clock = Clock(1_000_000.0)
    store = MemoryAnswers(Limits(max_answers=1), clock=clock)
    for n in range(GONE_KEPT // 2 + 10):  # each dropped answer leaves two reasons
        store.keep(answer(n, clock))
    assert len(store._gone) == GONE_KEPT
    assert "resp_0" not in store.find(["resp_0"], []).gone  # the oldest reasons went first
    last = GONE_KEPT // 2 + 8  # (the one after it is kept)
    assert f"resp_{last}" in store.find([f"resp_{last}"], []).gone


# -- the bounds hold whatever is kept --------------------------------------------------------

texts = st.sampled_from(["a", "bb", "the same words", "x" * 200, "ünïcode", "y" * 50])
items = st.builds(user, texts)
keeps = st.lists(
    st.tuples(
        st.integers(0, 12),  # response id: repeats replace
        st.lists(items, max_size=4),
        st.lists(st.integers(0, 20), max_size=3),  # output item ids: shared across answers
        st.floats(0, 500),  # seconds since the previous keep
    ),
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(
    keeps,
    st.integers(1, 6),
    st.integers(200, 3000),
    st.floats(100, 2000),
)
def test_the_store_is_always_within_its_bounds_and_true_to_what_it_keeps(
    steps: list[tuple[int, list[dict[str, Any]], list[int], float]],
    max_answers: int,
    max_bytes: int,
    max_seconds: float,
) -> None:
    clock = Clock(1_000_000.0)
    limits = Limits(max_answers, max_seconds, max_bytes)
    store = MemoryAnswers(limits, clock=clock)
    latest: OrderedDict[str, Answer] = OrderedDict()  # the last kept under each id, in order
    for rid, inputs, outs, wait in steps:
        clock.now += wait
        output = [message(f"msg_{o}", f"from {rid}") for o in outs]
        kept = Answer(f"resp_{rid}", inputs, output, "u", False, clock.now)
        store.keep(kept)
        latest.pop(kept.id, None)
        latest[kept.id] = kept
        assert len(store) <= max_answers and store.bytes <= max_bytes
    found = store.find(list(latest), [f"msg_{o}" for o in range(21)])
    # What is kept is the newest answers (the order they were last kept in), unchanged.
    order = list(latest.values())
    assert list(found.answers.values()) == [a for a in order if a.id in found.answers]
    for a in found.answers.values():
        assert a == latest[a.id] and clock.now - a.created <= max_seconds
    assert [a.id for a in order[len(order) - len(found.answers) :]] == list(found.answers)
    # Every answer no longer kept says why; bytes count each distinct item once.
    assert set(latest) == set(found.answers) | {k for k in found.gone if k.startswith("resp_")}
    distinct = {blob_key(jsontext.dumps(i)) for a in found.answers.values() for i in a.input}
    distinct |= {blob_key(jsontext.dumps(i)) for a in found.answers.values() for i in a.output}
    sizes = {
        blob_key(jsontext.dumps(i)): len(jsontext.dumps(i))
        for a in found.answers.values()
        for i in (*a.input, *a.output)
    }
    assert store.bytes == sum(sizes[k] for k in distinct)
    # Every kept answer's items are found, each id naming the newest kept answer with it.
    held = {o["id"] for a in found.answers.values() for o in a.output}
    assert set(found.items) == held
    for item_id, hit in found.items.items():
        owners = [
            a.id for a in order if a.id in found.answers and item_id in [o["id"] for o in a.output]
        ]
        assert hit.answer == owners[-1]
