"""The codec as the registry and recording reader see it."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamscope.codecs import get_codec
from streamscope.codecs.responses import CODEC
from streamscope.recording import read_recording
from tests.codecs.responses.util import FILES


def test_registered_under_its_name() -> None:
    codec = get_codec("responses")
    assert codec is CODEC
    assert (codec.name, codec.title) == ("responses", "OpenAI Responses")


@pytest.mark.parametrize(
    ("payload", "event", "mine"),
    [
        ({"type": "response.created", "sequence_number": 0}, "response.created", True),
        ({"type": "response.output_text.delta"}, None, True),
        ({"type": "error", "sequence_number": 3, "code": "x", "message": "y"}, "error", True),
        ({"type": "error", "error": {"type": "overloaded_error"}}, "error", False),  # Anthropic
        ({"type": "message_start", "message": {}}, "message_start", False),
        ({"type": "chat.start", "model_instance_id": "m"}, "chat.start", False),  # LM Studio
        ({"object": "chat.completion.chunk", "choices": []}, None, False),
        ({"type": 5}, None, False),
    ],
)
def test_sniff(payload: dict[str, object], event: str | None, mine: bool) -> None:
    assert CODEC.sniff(payload, event) is mine


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_recordings_are_detected_as_responses(path: Path) -> None:
    assert read_recording(path.read_bytes()).protocol == "responses"
