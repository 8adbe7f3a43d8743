"""Every real recording of OpenAI Chat (and its compatible dialects) decodes cleanly and
assembles into what its payloads say; decode -> encode -> decode keeps the content; the
official SDK assembles our re-encoding of each recording the same way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamscope.codecs import EncodeOptions
from streamscope.findings import errors
from streamscope.model.assemble import assemble
from streamscope.model.events import End, MessageStart
from streamscope.model.response import Response
from streamscope.model.stop import from_openai_chat
from tests import sdk_clients
from tests.codecs.openai_chat.helpers import (
    Expected,
    check_contract,
    decode_bytes,
    decode_frames,
    encode,
    expected,
    payloads,
)
from tests.support import fixture_files, load

FILES = fixture_files("openai-chat") + fixture_files("openai-compatible-chat")
IDS = [p.name for p in FILES]


def test_fixture_set_is_complete() -> None:
    assert len(fixture_files("openai-chat")) == 14
    assert len(fixture_files("openai-compatible-chat")) == 7


def _expected_output_tokens(usage: dict[str, object]) -> int:
    out = usage["completion_tokens"]
    assert isinstance(out, int)
    details = usage.get("completion_tokens_details")
    reasoning = details.get("reasoning_tokens") if isinstance(details, dict) else None
    # xAI reports reasoning outside completion_tokens (total = prompt + completion + reasoning)
    if reasoning and usage.get("total_tokens") == usage["prompt_tokens"] + out + reasoning:
        return out + reasoning
    return out


def _check(resp: Response, exp: Expected) -> None:
    indexes = sorted(set(exp.text) | set(exp.finish))
    assert [c.index for c in resp.choices] == indexes
    for i in indexes:
        c = resp.choice(i)
        assert c.text == exp.text.get(i, "")
        assert c.reasoning == exp.reasoning.get(i, "")
        assert c.refusal == exp.refusal.get(i, "")
        calls = [(t.name, t.parsed_arguments()) for t in c.tool_calls]
        assert calls == [(n, json.loads(a) if a else {}) for n, a in exp.calls.get(i, [])]
        assert c.finish == from_openai_chat(exp.finish[i])
    if exp.usage is None:
        assert resp.usage is None
    else:
        assert resp.usage is not None
        assert resp.usage.input_tokens == exp.usage["prompt_tokens"]
        assert resp.usage.output_tokens == _expected_output_tokens(exp.usage)


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_fixture_decodes_cleanly(path: Path) -> None:
    rec = load(path)
    assert rec.protocol == "openai-chat"
    events, findings = decode_frames(rec.frames)
    assert errors(findings) == []
    # Real recordings keep the contract, except the one that shows a known break.
    expected_warnings = {
        "vercel_anthropic-compat-endpoint_tool-call-index1.sse": ["tool-call-index-not-dense"]
    }.get(path.name, [])
    assert [f.code for f in findings if f.severity == "warning"] == expected_warnings
    assert isinstance(events[0], MessageStart) and isinstance(events[-1], End)
    first = next(p for p in payloads(path) if p.get("object") == "chat.completion.chunk")
    assert events[0].id == first["id"] and events[0].model == first["model"]
    _check(assemble(events), expected(path))


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_fixture_roundtrip(path: Path) -> None:
    events, _ = decode_frames(load(path).frames)
    body, enc = encode(events)
    stream = check_contract(body)
    assert enc.findings == []
    again, findings = decode_bytes(body)
    assert findings == []
    a, b = assemble(events), assemble(again)
    _check(b, expected(path))
    assert (b.id, b.model, b.created) == (a.id, a.model, a.created)
    assert b.usage == a.usage
    # logprobs survive too
    for ca, cb in zip(a.choices, b.choices, strict=True):
        assert [getattr(p, "logprobs", None) for p in ca.parts] == [
            getattr(p, "logprobs", None) for p in cb.parts
        ]
    assert (stream.usage_chunk is None) == (a.usage is None)


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_fixture_sdk_assembles_our_encoding(path: Path) -> None:
    events, _ = decode_frames(load(path).frames)
    body, _ = encode(events)
    exp = expected(path)
    indexes = sorted(exp.finish)
    for i in indexes:
        got = sdk_clients.openai_chat(body, choice=i)
        assert got["choices"] == len(indexes)
        assert got["text"] == exp.text.get(i, "")
        assert got["reasoning"] == exp.reasoning.get(i, "")
        assert got["refusal"] == exp.refusal.get(i, "")
        assert got["tool_calls"] == [
            (n, json.loads(a) if a else {}) for n, a in exp.calls.get(i, [])
        ]
        assert got["finish"] == exp.finish[i]
        if exp.usage is None:
            assert got["usage"] is None
        else:
            assert got["usage"] == (
                exp.usage["prompt_tokens"],
                _expected_output_tokens(exp.usage),
            )


def test_include_usage_false_drops_usage_chunk() -> None:
    path = next(p for p in FILES if p.name == "oai-py_text_usage_done.sse")
    events, _ = decode_frames(load(path).frames)
    body, _ = encode(events, EncodeOptions(include_usage=False))
    stream = check_contract(body)
    assert stream.usage_chunk is None
    assert all("usage" not in c for c in stream.chunks)
