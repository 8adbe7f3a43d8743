"""Tool calls followed fragment by fragment (app/streamscope/client/tools.py): on real
recordings the entries and their accumulated arguments are the assembled response's tool
calls, and ``parsed`` turns true exactly at the fragment that completes the JSON."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from streamscope.client import ToolCallTracker
from streamscope.client.tools import TRACKED
from streamscope.codecs import get_codec
from streamscope.model.assemble import assemble
from streamscope.model.events import Event, ToolCallDelta, ToolCallEnd, ToolCallStart
from tests.model.test_events_exhaustive_dispatch import SAMPLES
from tests.support import FIXTURES, load

RECORDINGS = [
    "openai-chat/oai-py_tool-calls-parallel.sse",
    "openai-chat/oai-py_tool-call-single.sse",
    "openai-compatible-chat/vercel_anthropic-compat-endpoint_tool-call-index1.sse",
    "anthropic/ant-py_text-then-tool-use.sse",
    "anthropic/vercel_tool-use_json-other-tool.jsonl",
    "anthropic/vercel_tool-use_no-args.jsonl",
    "anthropic/ant-py_max-tokens-mid-tool-json_padded.sse",
    "responses/vercel_azure-gpt51_function-call.jsonl",
    "responses/vercel_azure-codex_reasoning-summary_function-calls.step1.jsonl",
]


def parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def decoded(path: Path) -> list[list[Event]]:
    """The events of each frame of a recording, in order."""
    rec = load(path)
    decoder = get_codec(rec.protocol).stream_decoder()
    per_frame = [decoder.decode(f) for f in rec.frames]
    per_frame[-1] = per_frame[-1] + decoder.finish()
    return per_frame


@pytest.mark.parametrize("name", RECORDINGS)
def test_entries_follow_the_recordings_tool_calls(name: str) -> None:
    per_frame = decoded(FIXTURES / name)
    tracker = ToolCallTracker()
    seen: dict[tuple[int, int], str] = {}  # the arguments so far, recomputed here
    flips: dict[tuple[int, int], int | None] = {}  # the fragment where they first parse
    counts: dict[tuple[int, int], int] = {}
    for index, events in enumerate(per_frame):
        t_ms = index * 10.0
        changed = tracker.feed((index, t_ms, ev) for ev in events)
        touched = [
            (ev.choice, ev.index)
            for ev in events
            if isinstance(ev, ToolCallStart | ToolCallDelta | ToolCallEnd)
        ]
        assert changed == list(dict.fromkeys(touched))
        for ev in events:
            if isinstance(ev, ToolCallDelta):
                key = (ev.choice, ev.index)
                seen[key] = seen.get(key, "") + ev.arguments
                counts[key] = counts.get(key, 0) + 1
                if flips.get(key) is None and parses(seen[key]):
                    flips[key] = counts[key] - 1
        # After every frame: the parse state is json.loads of the arguments so far.
        for key, text in seen.items():
            entry = tracker.get(key)
            assert entry is not None
            assert entry.arguments == text
            assert entry.parsed is parses(text), (key, text)
            assert entry.value == (json.loads(text) if entry.parsed else None)
    response = assemble(ev for events in per_frame for ev in events)
    calls = [(t.id, t.name, t.arguments) for c in response.choices for t in c.tool_calls]
    assert calls, "the recording has tool calls"
    assert [(e.id, e.name, e.arguments) for e in tracker] == calls
    for entry in tracker:
        assert "".join(f.text for f in entry.fragments) == entry.arguments
        assert all(f.t_ms == f.frame * 10.0 for f in entry.fragments)
        assert [f.frame for f in entry.fragments] == sorted(f.frame for f in entry.fragments)
        assert entry.parsed_since == flips.get(entry.key)  # flipped exactly there
        if entry.parsed_since is not None:
            texts = [f.text for f in entry.fragments]
            assert not parses("".join(texts[: entry.parsed_since]))
            assert parses("".join(texts[: entry.parsed_since + 1]))


def test_the_fragments_remember_their_frames() -> None:
    per_frame = decoded(FIXTURES / "openai-chat/oai-py_tool-calls-parallel.sse")
    tracker = ToolCallTracker()
    for index, events in enumerate(per_frame):
        tracker.feed((index, 0.0, ev) for ev in events)
    for entry in tracker:
        for fragment in entry.fragments:
            frame_events = per_frame[fragment.frame]
            assert any(
                isinstance(ev, ToolCallDelta)
                and ev.index == entry.index
                and ev.arguments == fragment.text
                for ev in frame_events
            )
    assert len(tracker) == 2 and all(e.parsed and e.ended for e in tracker)


def test_a_truncated_call_never_parses() -> None:
    per_frame = decoded(FIXTURES / "anthropic/ant-py_max-tokens-mid-tool-json_padded.sse")
    tracker = ToolCallTracker()
    tracker.feed((i, 0.0, ev) for i, events in enumerate(per_frame) for ev in events)
    (entry,) = [e for e in tracker if e.fragments]
    assert not entry.parsed and entry.value is None and entry.parsed_since is None


TEXTS = [
    '{"a": "b}"}',
    '{"s": "q\\"}{", "t": 1}',
    '{"k": [1, {"x": "]"}], "e": "\\\\"}',
    '{"u": "\\u007d", "n": null}',
    '  {"a": 1}  \n',
    '{"a": 1}}',
    "[1, [2, 3]]",
    '"a \\" string"',
    "12",
    "{}",
]


def feed_pieces(pieces: list[str]) -> list[bool]:
    tracker = ToolCallTracker()
    tracker.feed([(0, 0.0, ToolCallStart(0, "c", "f"))])
    states: list[bool] = []
    for n, piece in enumerate(pieces):
        tracker.feed([(n, 0.0, ToolCallDelta(0, piece))])
        entry = tracker.get((0, 0))
        assert entry is not None
        states.append(entry.parsed)
    return states


@pytest.mark.parametrize("text", TEXTS)
def test_strings_escapes_and_brackets_never_fool_the_scanner(text: str) -> None:
    rng = random.Random(text)
    splits = [list(text)]  # one character per fragment: every prefix is checked
    for _ in range(20):
        cuts = sorted(rng.sample(range(1, len(text)), min(3, len(text) - 1)))
        splits.append([text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)])
    for pieces in splits:
        prefixes = ["".join(pieces[: n + 1]) for n in range(len(pieces))]
        assert feed_pieces(pieces) == [parses(p) for p in prefixes], pieces


def test_a_long_object_is_not_parsed_on_every_fragment(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = 0
    real = json.loads

    def counting(text: Any, **kw: Any) -> Any:
        nonlocal calls
        calls += 1
        return real(text, **kw)

    monkeypatch.setattr(json, "loads", counting)  # the json module tools.py calls
    text = json.dumps({"rows": [{"id": i, "note": 'x{y}[z]"q"'} for i in range(400)]})
    pieces = [text[i : i + 7] for i in range(0, len(text), 7)]
    states = feed_pieces(pieces)
    assert states[-1] is True and not any(states[:-1])
    assert len(pieces) > 1000 and calls <= 2


def test_a_call_started_again_at_the_same_index_is_a_new_entry() -> None:
    tracker = ToolCallTracker()
    tracker.feed([(0, 0.0, ToolCallStart(0, "a", "f")), (0, 0.0, ToolCallDelta(0, "{}"))])
    tracker.feed([(1, 5.0, ToolCallEnd(0)), (2, 6.0, ToolCallStart(0, "b", "g"))])
    (entry,) = list(tracker)
    assert (entry.id, entry.name, entry.arguments, entry.first_frame) == ("b", "g", "", 2)
    orphan = ToolCallTracker()
    assert orphan.feed([(3, 1.0, ToolCallDelta(1, '{"x"'))]) == [(0, 1)]
    got = orphan.get((0, 1))
    assert got is not None and (got.id, got.name, got.parsed) == ("", "", False)


def test_a_freeform_call_is_its_text_not_json() -> None:
    """Codex's apply_patch: a custom tool's input is raw text; the tree shows it whole
    and never as arguments that fail to parse."""
    tracker = ToolCallTracker()
    patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch"
    events = [
        ToolCallStart(0, "call_1", "apply_patch", custom=True),
        *[ToolCallDelta(0, patch[i : i + 7]) for i in range(0, len(patch), 7)],
        ToolCallEnd(0),
    ]
    tracker.feed((i, float(i), ev) for i, ev in enumerate(events))
    [entry] = list(tracker)
    assert entry.custom and entry.parsed and entry.value == patch == entry.arguments
    assert entry.parsed_since == 0 and entry.ended


@pytest.mark.parametrize("kind", list(SAMPLES), ids=lambda k: k.__name__)
def test_every_event_class_is_taken_and_only_calls_are_kept(kind: type) -> None:
    tracker = ToolCallTracker()
    changed = tracker.feed([(5, 1.0, SAMPLES[kind])])  # an unhandled class: assert_never
    calls = (ToolCallStart, ToolCallDelta, ToolCallEnd)
    assert changed == ([(0, 0)] if kind in calls else [])
    assert len(tracker) == (1 if kind in calls else 0)


def test_a_feed_hands_the_tracker_exactly_the_events_it_keeps() -> None:
    """``TRACKED`` is the feed's filter (client/feed.py): the types the tracker acts on."""
    kept = {SAMPLES[k].type for k in SAMPLES if ToolCallTracker().feed([(0, 0.0, SAMPLES[k])])}
    assert kept == TRACKED == {"tool_call_start", "tool_call_delta", "tool_call_end"}
