"""The full Responses ``response`` object: its settings echoed from OpenAI's defaults, the
client's request and the upstream's own echo (in rising precedence, type-checked), and its
usage with numbers everywhere."""

from __future__ import annotations

from streamscope.codecs.responses.objects import (
    LIFECYCLE_KEYS,
    SETTING_TYPES,
    default_settings,
    meta_settings,
    new_id,
    request_settings,
    response_object,
    settings_for,
    usage_object,
)
from streamscope.model.events import Usage
from streamscope.model.request import Request, TextPart, Thinking, ToolChoice


def test_settings_come_from_defaults_then_the_request_then_the_upstream() -> None:
    request = Request("m", system=[TextPart("Be brief.")], temperature=0.2, max_tokens=50)
    meta = {"temperature": 0.7, "store": True}
    settings = settings_for(request, meta)
    assert settings["instructions"] == "Be brief."  # from the request
    assert settings["max_output_tokens"] == 50
    assert settings["temperature"] == 0.7  # the upstream's echo wins
    assert settings["store"] is True
    assert settings["truncation"] == "disabled"  # OpenAI's default
    assert settings_for(None, {}) == default_settings()


def test_only_known_settings_of_the_right_type_are_taken_from_meta() -> None:
    meta = {
        "max_output_tokens": True,  # a JSON true is no token count
        "temperature": 1,  # an integer is a number
        "top_p": "high",
        "previous_response_id": None,  # null is always allowed
        "system_fingerprint": "fp_1",  # not a Responses setting
        "output": [],  # this response's own field, never a setting
    }
    assert meta_settings(meta) == {"temperature": 1, "previous_response_id": None}


def test_a_request_sets_only_what_it_asks_for() -> None:
    request = Request(
        "m",
        tool_choice=ToolChoice("required", parallel=False),
        thinking=Thinking(enabled=True, budget_tokens=30000, summary="detailed"),
        extra={"responses_fields": {"verbosity": "low", "store": "yes", "top_logprobs": 3}},
    )
    settings = request_settings(request)
    assert settings["tool_choice"] == "required" and settings["parallel_tool_calls"] is False
    assert settings["reasoning"] == {"effort": "high", "summary": "detailed"}
    assert settings["text"] == {"format": {"type": "text"}, "verbosity": "low"}
    assert settings["top_logprobs"] == 3 and "store" not in settings  # "yes" is no bool
    assert "temperature" not in settings and "instructions" not in settings


def test_settings_never_overwrite_the_responses_own_fields() -> None:
    assert not set(SETTING_TYPES) & LIFECYCLE_KEYS
    obj = response_object(
        id="resp_1",
        created_at=5,
        model="m",
        status="completed",
        settings=settings_for(None, {}),
        output=[{"type": "message"}],
    )
    assert (obj["id"], obj["object"], obj["status"], obj["output"]) == (
        "resp_1",
        "response",
        "completed",
        [{"type": "message"}],
    )
    assert obj["error"] is None and obj["incomplete_details"] is None and obj["usage"] is None
    assert set(default_settings()) <= set(obj)


def test_usage_has_numbers_everywhere() -> None:
    assert usage_object(None) == {
        "input_tokens": 0,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": 0,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 0,
    }
    usage = usage_object(Usage(10, 4, cache_read_tokens=6, cache_creation_tokens=2))
    assert (usage["total_tokens"], usage["input_tokens_details"]["cache_write_tokens"]) == (14, 2)


def test_new_ids_carry_their_prefix_and_differ() -> None:
    ids = {new_id("resp_") for _ in range(20)}
    assert len(ids) == 20 and all(i.startswith("resp_") and len(i) == 37 for i in ids)
