"""OpenAI Chat's usage and error objects, both ways, with the dialects of compatible
servers (DeepSeek's cache count, SGLang's top-level reasoning, xAI's reasoning outside
``completion_tokens``)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamscope.codecs.openai_chat.common import error_to_json, usage_from_json, usage_to_json
from streamscope.model.events import Error, Usage


@pytest.mark.parametrize(
    ("usage", "canonical"),
    [
        (
            {
                "prompt_tokens": 20,
                "completion_tokens": 30,
                "total_tokens": 50,
                "prompt_tokens_details": {"cached_tokens": 8},
                "completion_tokens_details": {"reasoning_tokens": 12},
            },
            Usage(20, 30, cache_read_tokens=8, reasoning_tokens=12),
        ),
        (  # DeepSeek
            {"prompt_tokens": 20, "completion_tokens": 3, "prompt_cache_hit_tokens": 16},
            Usage(20, 3, cache_read_tokens=16),
        ),
        (  # SGLang / Azure DeepSeek
            {"prompt_tokens": 5, "completion_tokens": 9, "reasoning_tokens": 4},
            Usage(5, 9, reasoning_tokens=4),
        ),
        (  # xAI: total = prompt + completion + reasoning, so output is completion + reasoning
            {
                "prompt_tokens": 10,
                "completion_tokens": 7,
                "total_tokens": 47,
                "completion_tokens_details": {"reasoning_tokens": 30},
            },
            Usage(10, 37, reasoning_tokens=30),
        ),
        ({"prompt_tokens": "10", "completion_tokens": None}, Usage()),
    ],
    ids=["openai", "deepseek", "sglang", "xai", "wrong-types"],
)
def test_usage_from_each_dialect(usage: dict[str, Any], canonical: Usage) -> None:
    assert usage_from_json(usage) == canonical


def test_usage_written_has_all_three_counts_and_details_only_when_known() -> None:
    assert usage_to_json(Usage()) == {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    full = usage_to_json(Usage(10, 5, cache_read_tokens=4, reasoning_tokens=2))
    assert full == {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "total_tokens": 15,
        "prompt_tokens_details": {"cached_tokens": 4},
        "completion_tokens_details": {"reasoning_tokens": 2},
    }


_count = st.integers(0, 10**7)


@given(inp=_count, out=_count, read=st.none() | _count, reasoning=st.none() | _count)
def test_usage_survives_the_wire(
    inp: int, out: int, read: int | None, reasoning: int | None
) -> None:
    usage = Usage(inp, out, cache_read_tokens=read, reasoning_tokens=reasoning)
    assert usage_from_json(usage_to_json(usage)) == usage


def test_an_error_is_openais_envelope() -> None:
    body = error_to_json(Error("Rate limit reached", "requests", "rate_limit_exceeded"))
    assert body == {
        "error": {
            "message": "Rate limit reached",
            "type": "requests",
            "code": "rate_limit_exceeded",
            "param": None,
        }
    }
