"""Non-streaming responses translate both ways through the canonical Response.

Every recording is assembled into its complete response, written as each protocol's
non-streaming body, and read back: text, reasoning, refusal, tool calls, usage and
finish survive (as far as the target protocol can carry them). The bodies the three
client protocols get are also parsed by the official SDKs' response models.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic.types
import google.genai.types
import openai.types.chat
import openai.types.responses
import pytest

from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.model.assemble import assemble
from streamscope.model.response import Response
from tests.support import FIXTURES, fixture_files, load
from tests.translation.sdk_expect import ESTIMATED

# (Error streams have no successful body; their error envelopes are the proxy's concern.)
SDK_MODELS: dict[str, Any] = {
    "openai-chat": openai.types.chat.ChatCompletion,
    "anthropic": anthropic.types.Message,
    "responses": openai.types.responses.Response,
    "gemini": google.genai.types.GenerateContentResponse,
}


def source_response(path: Path) -> Response:
    rec = load(path)
    decoder = get_codec(rec.protocol).stream_decoder()
    events = [ev for frame in rec.frames for ev in decoder.decode(frame)]
    return assemble(events + decoder.finish())


def content(resp: Response, target: str) -> dict[str, Any]:
    c = resp.choice(0)
    # Anthropic, LM Studio and Gemini have no refusal part: a refusal travels as text there.
    merged = target in ("anthropic", "lmstudio", "gemini")
    client_calls = [
        (t.wire_name, t.parsed_arguments() if _is_json(t.arguments) else t.arguments)
        for t in c.tool_calls
    ]
    return {
        "text": c.text + (c.refusal if merged else ""),
        "refusal": "" if merged else c.refusal,
        "reasoning": c.reasoning,
        "tool_calls": client_calls,
        "usage": (
            (resp.usage.input_tokens or 0, resp.usage.output_tokens or 0) if resp.usage else (0, 0)
        ),
    }


def _unknown_usage(target: str) -> tuple[Any, Any]:
    """What a body without usage reads back as: estimates where the protocol requires
    counts (model.estimate); else none, read as zeros."""
    return (ESTIMATED, ESTIMATED) if get_codec(target).requires_usage else (0, 0)


def _is_json(text: str) -> bool:
    try:
        json.loads(text or "{}")
    except ValueError:
        return False
    return True


FILES = [p for p in fixture_files() if source_response(p).error is None]


def test_most_recordings_end_well() -> None:
    assert len(FILES) == len(fixture_files()) - 2


@pytest.mark.parametrize("target", list(PROTOCOLS))
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_complete_response_survives_each_protocol(path: Path, target: str) -> None:
    resp = source_response(path)
    codec = get_codec(target)
    body = codec.encode_response(resp)
    json.dumps(body)
    again = codec.decode_response(body)
    want, got = content(resp, target), content(again, target)
    if resp.usage is None:
        want["usage"] = _unknown_usage(target)
    if target in ("anthropic", "gemini"):
        # Their tool input (args) is an object: unparseable partial JSON cannot travel.
        want["tool_calls"] = [
            (n, a if not isinstance(a, str) else got_a)
            for (n, a), (_, got_a) in zip(want["tool_calls"], got["tool_calls"], strict=True)
        ]
    assert got == want
    if target in SDK_MODELS:
        model = SDK_MODELS[target].model_validate(body)
        assert model is not None
