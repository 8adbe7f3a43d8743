"""Golden translation: every real recording, translated into each client protocol, is
assembled by that protocol's official SDK stream helper into what the source said.

The source's meaning is taken from our own decoder's assembly (``assemble``); the test
``test_our_decoder_agrees_with_the_official_sdk`` ties that to the official SDK of the
source protocol wherever one exists, so the chain is SDK(source) == ours == SDK(target).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from streamscope.findings import errors
from streamscope.model.response import Response
from streamscope.model.stop import TO_ANTHROPIC, TO_OPENAI_CHAT
from streamscope.translation.offline import translate_frames
from streamscope.translation.pipeline import StreamPipeline
from tests import sdk_clients
from tests.support import FIXTURES, fixture_files, load
from tests.translation.sdk_expect import expected, got

CLIENTS = {
    "openai-chat": sdk_clients.openai_chat,
    "anthropic": sdk_clients.anthropic_messages,
    "responses": sdk_clients.openai_responses,
}
FILES = fixture_files()


def ids(p: Path) -> str:
    return str(p.relative_to(FIXTURES))


def translate(path: Path, target: str) -> tuple[bytes, Response, StreamPipeline]:
    rec = load(path)
    out, pipeline = translate_frames(rec.frames, rec.protocol, target)
    return b"".join(out), pipeline.assembler.response, pipeline


def test_there_are_many_golden_recordings() -> None:
    assert len(FILES) >= 50


@pytest.mark.parametrize("path", FILES, ids=ids)
def test_recording_decodes_without_error_findings(path: Path) -> None:
    rec = load(path)
    _, resp, t = translate(path, rec.protocol)
    assert errors(rec.findings + t.decoder.findings) == []
    choice = resp.choice(0)
    assert choice.parts or resp.error is not None, "nothing decoded"


@pytest.mark.parametrize("target", list(CLIENTS))
@pytest.mark.parametrize("path", FILES, ids=ids)
def test_translated_recording_assembles_in_the_official_sdk(path: Path, target: str) -> None:
    body, resp, t = translate(path, target)
    client = CLIENTS[target]
    if resp.error is not None:
        # An error in the source must reach the client as an error the SDK raises.
        with pytest.raises((openai.APIError, anthropic.APIError)) as info:
            client(body)
        assert resp.error.message[:40] in str(info.value)
        return
    result = client(body)
    assert_read_as_said(result, resp, target)
    if target == "openai-chat" and len(resp.choices) > 1:
        assert result["choices"] == len(resp.choices)
        for c in resp.choices[1:]:
            assert sdk_clients.openai_chat(body, choice=c.index)["text"] == c.text


def assert_read_as_said(result: dict[str, Any], resp: Response, target: str) -> None:
    """The SDK of ``target`` assembled what ``resp`` said, its finish in its own words."""
    assert got(result) == expected(resp, target)
    finish = resp.choice(0).finish
    if finish is not None and target == "openai-chat":
        assert result["finish"] == TO_OPENAI_CHAT[finish]
    if finish is not None and target == "anthropic":
        assert result["stop_reason"] == TO_ANTHROPIC[finish]


# Findings that explain why an official SDK cannot read a recording as it is.
SDK_BREAKERS = {
    "missing-terminator",
    "response-id-changed",
    "tool-call-index-not-dense",
}


def native_bytes(path: Path) -> bytes:
    rec = load(path)
    raw = b"".join(f.raw for f in rec.frames)
    # tests/fixtures' .sse files from anthropic-sdk-python end without the final blank
    # line (SOURCES.md says to append it when replaying).
    return raw if raw.endswith(b"\n\n") else raw.rstrip(b"\n") + b"\n\n"


# LM Studio's native protocol has no official SDK stream helper to compare with.
WITH_SDK = [p for p in FILES if load(p).protocol in CLIENTS]


def test_most_recordings_have_an_sdk_to_compare_with() -> None:
    assert len(WITH_SDK) == len(FILES) - 1


@pytest.mark.parametrize("path", WITH_SDK, ids=ids)
def test_our_decoder_agrees_with_the_official_sdk(path: Path) -> None:
    rec = load(path)
    _, resp, t = translate(path, rec.protocol)
    codes = {f.code for f in t.decoder.findings}
    client = CLIENTS[rec.protocol]
    try:
        result = client(native_bytes(path))
    except (openai.APIError, anthropic.APIError) as exc:
        assert resp.error is not None and resp.error.message[:40] in str(exc)
        return
    except (openai.OpenAIError, RuntimeError, AssertionError, LookupError, ValueError) as exc:
        # The recording itself breaks the SDK (trimmed, ids rotating, tool index from 1):
        # our decoder must have said why.
        assert codes & SDK_BREAKERS, f"SDK failed ({exc!r}); decoder findings: {codes}"
        return
    want = expected(resp, rec.protocol)
    if "reasoning-outside-completion-tokens" in codes and resp.usage:
        # xAI leaves reasoning out of completion_tokens; we count it as output.
        want["usage"] = (want["usage"][0], want["usage"][1] - (resp.usage.reasoning_tokens or 0))
    assert got(result) == want


def test_provider_metadata_does_not_leak_across_protocols() -> None:
    # Anthropic's service_tier "standard" is no value an OpenAI client accepts.
    path = FIXTURES / "anthropic" / "vercel_text_sonnet45.jsonl"
    assert b'"service_tier":"standard"' in path.read_bytes()
    for target in ("openai-chat", "responses"):
        body, _, _ = translate(path, target)
        assert b'"service_tier":"standard"' not in body
    # ...while a protocol's own metadata survives a same-protocol pass.
    chat = FIXTURES / "openai-chat" / "oai-py_text_usage_done.sse"
    body, _, _ = translate(chat, "openai-chat")
    assert b'"system_fingerprint":"fp_' in body
