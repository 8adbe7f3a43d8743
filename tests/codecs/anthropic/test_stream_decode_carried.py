"""What the Anthropic decoder carries without a canonical slot, and
how the Anthropic encoder gives it back: a same-protocol relay in repair mode loses
nothing, and nothing well-formed is reported as an error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from streamscope.findings import errors
from streamscope.model.assemble import assemble
from streamscope.model.events import Opaque, ServerTool, TextDelta
from streamscope.model.response import ServerToolOut
from streamscope.wire import SSEDecoder, encode_frame
from streamscope.wire.frame import Frame
from tests.codecs.anthropic.contract import decode_frames, encode, load
from tests.support import fixture_files

Payload = dict[str, Any]

START: Payload = {
    "type": "message_start",
    "message": {
        "id": "msg_c",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    },
}
END: list[Payload] = [
    {
        "type": "message_delta",
        "delta": {"stop_reason": "end_turn", "stop_sequence": None},
        "usage": {"output_tokens": 7},
    },
    {"type": "message_stop"},
]


def frames(*payloads: Payload) -> list[Frame]:
    return [Frame(encode_frame(p, p["type"]), 0, p["type"], json.dumps(p)) for p in payloads]


def relayed(*payloads: Payload) -> tuple[list[Payload], Any, Any]:
    """The payloads as an Anthropic client gets them through decode -> encode, with the
    decoder and encoder (for their findings)."""
    events, dec = decode_frames(frames(*payloads))
    body, enc = encode(events)
    return wire(body), dec, enc


def wire(body: bytes) -> list[Payload]:
    sse = SSEDecoder()
    return [json.loads(f.data) for f in sse.feed(body, 0) + sse.flush(0) if f.data]


def block(i: int, content: Payload, *deltas: Payload) -> list[Payload]:
    return [
        {"type": "content_block_start", "index": i, "content_block": content},
        *({"type": "content_block_delta", "index": i, "delta": d} for d in deltas),
        {"type": "content_block_stop", "index": i},
    ]


def blocks(payloads: list[Payload]) -> list[tuple[Payload, list[Payload]]]:
    """Each content block: its start, and its deltas that say something (an empty text
    or JSON fragment says nothing), in order."""
    out: list[tuple[Payload, list[Payload]]] = []
    for p in payloads:
        if p["type"] == "content_block_start":
            out.append((p["content_block"], []))
        elif p["type"] == "content_block_delta":
            d = p["delta"]
            if d.get("text") == "" or d.get("partial_json") == "" or d.get("thinking") == "":
                continue
            out[-1][1].append(d)
    return out


SPARKLE = {"type": "sparkle_delta", "sparkle": {"level": 3}}


def test_a_delta_type_with_no_slot_stays_in_its_block() -> None:
    text = {"type": "text", "text": ""}
    payloads = [
        START,
        *block(0, text, {"type": "text_delta", "text": "a"}, SPARKLE),
        *block(1, text, SPARKLE, {"type": "text_delta", "text": "b"}),  # before any text
        *END,
    ]
    events, dec = decode_frames(frames(*payloads))
    assert [e.payload["delta"] for e in events if isinstance(e, Opaque)] == [SPARKLE, SPARKLE]
    # The second text block opens where it opened: an empty text delta before its delta.
    at = [i for i, e in enumerate(events) if isinstance(e, Opaque)][1]
    assert events[at - 1] == TextDelta("")
    assert errors(dec.findings) == []
    got, _, enc = relayed(*payloads)
    assert blocks(got) == [
        (text, [{"type": "text_delta", "text": "a"}, SPARKLE]),
        (text, [SPARKLE, {"type": "text_delta", "text": "b"}]),
    ]
    assert enc.findings == []


def test_an_event_type_with_no_slot_goes_back_in_place() -> None:
    notice = {"type": "rate_notice", "remaining": 4}
    text = {"type": "text", "text": ""}
    got, dec, _ = relayed(START, notice, *block(0, text, {"type": "text_delta", "text": "a"}), *END)
    types = [p["type"] for p in got]
    assert types[:3] == ["message_start", "ping", "rate_notice"]
    assert got[2] == notice
    [finding] = dec.findings
    assert (finding.code, finding.severity) == ("unknown-event-type", "info")


def test_a_block_of_a_type_no_codec_maps_goes_back_as_it_streamed() -> None:
    # A future block type with its own delta type, and a known server block's deltas:
    # the decoder keeps them all in the block; the complete block folds what it can.
    compaction = {"type": "compaction", "content": ""}
    result = {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_1", "content": {}}
    cite = {"type": "char_location", "cited_text": "x", "document_index": 0}
    payloads = [
        START,
        *block(
            0,
            compaction,
            {"type": "compaction_delta", "content": "summary "},
            {"type": "compaction_delta", "content": "so far"},
        ),
        *block(1, result, {"type": "citations_delta", "citation": cite}, SPARKLE),
        *END,
    ]
    events, dec = decode_frames(frames(*payloads))
    servers = [e for e in events if isinstance(e, ServerTool)]
    assert [s.payload for s in servers] == [
        {"type": "compaction", "content": "summary so far"},
        {**result, "citations": [cite]},
    ]
    assert not [e for e in events if isinstance(e, Opaque)]  # kept in their blocks
    codes = {f.code: f.severity for f in dec.findings}
    assert codes == {"unknown-delta-type": "info"}  # compaction_delta and sparkle_delta
    got, _, enc = relayed(*payloads)
    assert blocks(got) == blocks(payloads)
    assert enc.findings == []


def _subset(small: Any, big: Any) -> bool:
    if isinstance(small, dict):
        return isinstance(big, dict) and all(
            k in big and _subset(v, big[k]) for k, v in small.items()
        )
    return bool(small == big)


@pytest.mark.parametrize("path", fixture_files("anthropic"), ids=lambda p: p.name)
def test_a_recording_relayed_loses_nothing(path: Path) -> None:
    """Every recorded stream through decode -> encode: each block starts and streams as it
    did, and the message's start and end say at least what they said."""
    rec = load(path)
    source = [json.loads(f.data) for f in rec.frames if f.data and f.data.lstrip().startswith("{")]
    events, _ = decode_frames(rec.frames)
    body, enc = encode(events)
    got = wire(body)
    assert blocks(got) == blocks(source)
    for kind in ("message_start", "message_delta"):
        theirs = [p for p in source if p["type"] == kind]
        ours = [p for p in got if p["type"] == kind]
        assert len(ours) == 1 and all(_subset(p, ours[0]) for p in theirs), kind
    servers = [p for p in assemble(events).choice(0).parts if isinstance(p, ServerToolOut)]
    assert [s.payload["type"] for s in servers] == [
        b["type"] for b, _ in blocks(source) if b["type"] not in ("text", "thinking", "tool_use")
    ]
    assert enc.findings == []


def test_every_block_and_delta_the_codec_declares_carried_is_given_back() -> None:
    """The vocabulary's word is kept: each ``stream.block`` and ``stream.delta`` the
    Anthropic codec declares carried goes back to an Anthropic client as it streamed."""
    from streamscope.codecs.anthropic.vocabulary import VOCABULARY

    places = VOCABULARY.places
    kinds = sorted(n for n, h in places["stream.block"].items() if h == "carried")
    deltas = sorted(n for n, h in places["stream.delta"].items() if h == "carried")
    assert len(kinds) >= 8 and deltas == ["citations_delta"]
    cite = {"type": "char_location", "cited_text": "x", "document_index": 0}
    for kind in kinds:
        payloads = [
            START,
            *block(0, {"type": kind, "id": "srvtoolu_1", "marker": kind}),
            *block(1, {"type": "text", "text": ""}, {"type": "citations_delta", "citation": cite}),
            *END,
        ]
        got, dec, enc = relayed(*payloads)
        assert dec.findings == [] and enc.findings == [], kind
        assert blocks(got) == blocks(payloads), kind
