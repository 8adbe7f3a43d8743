"""Which chunk, choice and delta fields the OpenAI Chat decoder reads, and what it carries
beyond them (codecs/openai_chat/carried.py): the fields with no canonical slot go back
where they came to an OpenAI Chat client, and only a delta field no known dialect uses
is said (as ``info``).

The decoder's ``custom`` calls, and what a client of another protocol is told, are in
tests/codecs/openai_chat/test_stream_decode_carried.py, whose helpers these tests share.
"""

from __future__ import annotations

from streamscope.model.assemble import assemble
from streamscope.model.events import Opaque
from tests.codecs.openai_chat.helpers import check_contract, decode_bytes, encode, sse
from tests.codecs.openai_chat.test_stream_decode_carried import chunk


def test_fields_with_no_slot_are_carried_and_go_back_where_they_were() -> None:
    reasoning = [{"type": "reasoning.encrypted", "data": "opaque=="}]
    body = sse(
        chunk({"role": "assistant", "content": ""}, obfuscation="pad0"),
        chunk({"content": "Hi", "reasoning_details": reasoning}, obfuscation="pad1"),
        chunk({"content": "!", "sparkle": {"level": 3}}, citations=["https://a.example"]),
        chunk({}, "stop", obfuscation="pad3"),
    )
    events, findings = decode_bytes(body)
    carried = [e.payload for e in events if isinstance(e, Opaque)]
    assert carried == [
        {"chunk": {"obfuscation": "pad0"}},
        {"chunk": {"obfuscation": "pad1"}},
        {"delta": {"reasoning_details": reasoning}},
        {"chunk": {"citations": ["https://a.example"]}},
        {"delta": {"sparkle": {"level": 3}}},
        {"chunk": {"obfuscation": "pad3"}},
    ]
    # Only the delta field no known dialect uses is said, and as info.
    assert [(f.code, f.severity) for f in findings] == [("unknown-delta-field", "info")]
    out, enc = encode(events)
    got = check_contract(out).chunks
    assert enc.findings == []
    assert [c["obfuscation"] for c in got if "obfuscation" in c] == ["pad0", "pad1", "pad3"]
    assert [c["citations"] for c in got if "citations" in c] == [["https://a.example"]]
    deltas = [ch["delta"] for c in got for ch in c["choices"]]
    assert {"reasoning_details": reasoning} in deltas and {"sparkle": {"level": 3}} in deltas
    assert assemble(decode_bytes(out)[0]).choice(0).text == "Hi!"


def test_every_chunk_field_the_codec_does_not_map_goes_back() -> None:
    """Each chunk field the SDK defines that the codec does not map (carried or dropped in
    its vocabulary) still reaches an OpenAI Chat client: a same-protocol relay loses none."""
    from streamscope.codecs.openai_chat.vocabulary import VOCABULARY

    fields = sorted(n for n, h in VOCABULARY.places["chunk"].items() if h != "mapped")
    assert {"obfuscation", "service_tier", "system_fingerprint"} <= set(fields)
    body = sse(
        chunk({"role": "assistant", "content": ""}, **{f: f"v-{f}" for f in fields}),
        chunk({"content": "Hi"}, **{f: f"v-{f}" for f in fields}),
        chunk({}, "stop"),
    )
    events, findings = decode_bytes(body)
    assert findings == []
    got = check_contract(encode(events)[0]).chunks
    for name in fields:
        assert f"v-{name}" in [c.get(name) for c in got], name
