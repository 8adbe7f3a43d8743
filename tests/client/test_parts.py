"""Which frame wrote which characters of the answer (``PartsTracker``): over every real
recording, the spans rebuild each part exactly, and every character maps back to the
frame that carried it; over random delta sequences, the same by construction."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.client import SessionCallbacks, replay_session
from streamscope.client.parts import PARTS, PartsTracker
from streamscope.model.events import ReasoningDelta, RefusalDelta, TextDelta
from tests.model.test_events_exhaustive_dispatch import SAMPLES
from tests.support import fixture_files, load

SSE = [("content-type", "text/event-stream")]


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
async def test_the_spans_rebuild_every_part_of_a_recording(path: Path) -> None:
    rec = load(path)
    frames = [CapturedFrame(f.raw, 1_000_000 * (i + 1)) for i, f in enumerate(rec.frames)]
    events_by_frame: dict[int, list[object]] = {}
    session = replay_session(
        Leg(rec.protocol, 200, SSE, sent_ns=0, frames=frames),
        SessionCallbacks(
            on_events=lambda batch: [events_by_frame.setdefault(i, []).append(e) for i, e in batch]
        ),
    )
    result = await session.run()
    parts = session.parts
    if result.response is not None and result.response.choices:
        choice = result.response.choice(0)
        assert parts.text("text") == choice.text
        assert parts.text("reasoning") == choice.reasoning
    for part in PARTS:
        text = parts.text(part)
        rebuilt = []
        for offset, char in enumerate(text):
            frame = parts.frame_at(part, offset)
            assert frame is not None
            spans = [s for s in parts.spans_of(frame) if s[0] == part]
            assert any(start <= offset < end for _, start, end in spans)
            rebuilt.append(char)
        assert "".join(rebuilt) == text and parts.frame_at(part, len(text)) is None
    # Each span is exactly the text that frame's events added to the part.
    for frame, events in events_by_frame.items():
        added = "".join(e.text for e in events if isinstance(e, TextDelta) and e.choice == 0)
        spans = [(s, e) for p, s, e in parts.spans_of(frame) if p == "text"]
        assert "".join(parts.text("text")[s:e] for s, e in spans) == added


KINDS = {"text": TextDelta, "reasoning": ReasoningDelta, "refusal": RefusalDelta}
deltas = st.lists(
    st.tuples(st.sampled_from(sorted(KINDS)), st.text(max_size=5), st.booleans()), max_size=40
)


@given(deltas)
def test_any_sequence_of_deltas_maps_back_to_its_frames(items: list[tuple[str, str, bool]]) -> None:
    tracker = PartsTracker()
    frame = 0
    owner: dict[str, list[int]] = {p: [] for p in PARTS}
    for kind, text, new_frame in items:
        frame += 1 if new_frame else 0
        tracker.feed(frame, KINDS[kind](text))
        owner[kind] += [frame] * len(text)
    tracker.feed(frame, TextDelta("other choice", choice=1))  # not the first choice
    for part in PARTS:
        assert tracker.length(part) == len(owner[part])
        assert [tracker.frame_at(part, i) for i in range(len(owner[part]))] == owner[part]


def test_text_of_no_frame_counts_but_has_no_span() -> None:
    tracker = PartsTracker()
    tracker.feed(0, TextDelta("ab"))
    tracker.feed(-1, TextDelta("cd"))
    assert tracker.text("text") == "abcd"
    assert tracker.frame_at("text", 1) == 0 and tracker.frame_at("text", 2) is None
    assert tracker.spans_of(0) == [("text", 0, 2)]


@pytest.mark.parametrize("kind", list(SAMPLES), ids=lambda k: k.__name__)
def test_every_event_class_is_taken_and_only_text_is_kept(kind: type) -> None:
    tracker = PartsTracker()
    tracker.feed(3, SAMPLES[kind])  # an unhandled class fails its assert_never here
    kept = {part: tracker.text(part) for part in PARTS}
    texts = {TextDelta: "text", ReasoningDelta: "reasoning", RefusalDelta: "refusal"}
    expected = {part: "" for part in PARTS}
    if kind in texts:
        expected[texts[kind]] = SAMPLES[kind].text
        assert tracker.spans_of(3) == [(texts[kind], 0, len(SAMPLES[kind].text))]
    assert kept == expected
