"""LM Studio's declared vocabulary (codecs/lmstudio/vocabulary.py) says what its request
decoder does: a field declared carried lands in the codec's extra, named; one declared
mapped fills a canonical slot and is carried by no one."""

from __future__ import annotations

import pytest

from streamscope.codecs import get_codec

CODEC = get_codec("lmstudio")
BASE = {"model": "m", "input": "hi"}
CARRIED_VALUES = {
    "integrations": ["mcp/x"],
    "min_p": 0.1,
    "repeat_penalty": 1.1,
    "context_length": 4096,
    "store": False,
    "previous_response_id": "resp_1",
}
MAPPED_VALUES = {
    "system_prompt": "s",
    "stream": True,
    "temperature": 0.5,
    "top_p": 0.9,
    "top_k": 40,
    "max_output_tokens": 9,
    "reasoning": "low",
}


def test_the_values_cover_the_declaration() -> None:
    places = CODEC.vocabulary.places["request"]
    assert {n for n, h in places.items() if h == "carried"} == set(CARRIED_VALUES)
    assert {n for n, h in places.items() if h == "mapped"} == {"model", "input", *MAPPED_VALUES}


@pytest.mark.parametrize(("name", "value"), CARRIED_VALUES.items())
def test_a_carried_field_is_kept_and_named(name: str, value: object) -> None:
    req = CODEC.decode_request({**BASE, name: value})
    assert [c.field for c in req.carried] == [name]
    assert CODEC.encode_request(req)[name] == value


@pytest.mark.parametrize(("name", "value"), MAPPED_VALUES.items())
def test_a_mapped_field_is_read_into_its_slot(name: str, value: object) -> None:
    req = CODEC.decode_request({**BASE, name: value})
    assert req.carried == [] and req.extra == {}
    assert CODEC.encode_request(req)[name] == value
