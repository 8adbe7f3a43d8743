"""Request translation and its notes (translation/request.py): what the client's own
protocol carried is noted as dropped for another protocol's upstream, never for its own;
what the upstream's encoder changed is noted beside it."""

from __future__ import annotations

import copy

from streamscope.codecs import get_codec
from streamscope.model.request import RequestNote
from streamscope.translation.request import translate_request

ANTHROPIC = {
    "model": "claude",
    "max_tokens": 100,
    "temperature": 0.3,
    "thinking": {"type": "enabled", "budget_tokens": 2048},
    "container": "cnt_1",
    "tools": [
        {"name": "read", "input_schema": {"type": "object"}},
        {"type": "web_search_20250305", "name": "web_search"},
    ],
    "messages": [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "summarise"},
                {
                    "type": "document",
                    "source": {"type": "text", "media_type": "text/plain", "data": "x"},
                },
            ],
        }
    ],
}


def _notes(body: dict[str, object], client: str, target: str) -> dict[str, RequestNote]:
    request = get_codec(client).decode_request(copy.deepcopy(body))
    translated = translate_request(request, get_codec(target))
    return {n.field: n for n in translated.notes}


def test_what_the_client_protocol_carried_is_noted_for_another_upstream() -> None:
    notes = _notes(ANTHROPIC, "anthropic", "openai-chat")
    assert notes["container"].action == "dropped"
    assert "OpenAI Chat Completions has no place for it" in notes["container"].why
    assert notes["tools[1]"].action == "dropped"
    assert "web_search_20250305" in notes["tools[1]"].why
    assert notes["messages[0].content[1]"].action == "dropped"
    assert "document" in notes["messages[0].content[1]"].why
    # and what the encoder changed: a budget has no Chat form, an effort goes instead
    assert notes["thinking"].action == "changed" and notes["thinking"].instead == (
        "reasoning_effort low"
    )


def test_the_same_protocol_notes_nothing_it_carried() -> None:
    notes = _notes(ANTHROPIC, "anthropic", "anthropic")
    assert not {"container", "tools[1]", "messages[0].content[1]"} & notes.keys()


def test_the_upstream_body_is_the_encoders() -> None:
    request = get_codec("anthropic").decode_request(copy.deepcopy(ANTHROPIC))
    translated = translate_request(request, get_codec("responses"))
    assert translated.body == get_codec("responses").encode_request(request)
    assert [t["name"] for t in translated.body["tools"]] == ["read"]
    # Responses has no stop sequences nor top_k: noted; temperature goes (no thinking rule)
    assert translated.body["temperature"] == 0.3


def test_notes_round_trip_as_json() -> None:
    for note in _notes(ANTHROPIC, "anthropic", "lmstudio").values():
        assert RequestNote.from_json(note.to_json()) == note
    assert RequestNote.from_json({"field": "x", "action": "eaten", "why": "?"}) is None
    assert RequestNote.from_json("not a note") is None
