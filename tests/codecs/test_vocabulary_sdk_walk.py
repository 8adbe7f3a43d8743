"""The instruments of the SDK vocabulary checks (tests/codecs/sdk_types.py,
sdk_places.py, sdk_strategies.py), tested on what they read and build.

- The walk finds names at every place of :mod:`streamscope.codecs.vocabulary` for the
  pinned SDKs, among them the names the codecs carry (a path an SDK upgrade broke would
  otherwise check nothing).
- The walker reads TypedDicts as the SDKs write them: string annotations (``from
  __future__ import annotations``, where ``__required_keys__`` goes wrong on Python 3.11),
  ``Required``/``NotRequired`` and each declaring class's totality, wire-name aliases.
- The strategies build bodies that conform to the SDK's types and are strict JSON, and a
  planted body holds its name where :func:`~tests.codecs.sdk_places.locate` finds it.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, NotRequired, Required

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typing_extensions import TypedDict  # the SDKs' own, as they use it

from tests.codecs import sdk_places, sdk_types
from tests.codecs.sdk_strategies import header_keys, params, places_sent, planted, sdk_request

PROTOCOLS = ("anthropic", "openai-chat", "responses")


def test_the_sdk_walk_finds_every_place() -> None:
    """Every place of vocabulary.py's list holds names for the pinned SDKs: a path that an
    SDK upgrade broke would otherwise check nothing."""
    empty = [
        f"{protocol} {place}"
        for protocol in PROTOCOLS
        for place, names in places_sent(protocol).items()
        if not names
    ]
    assert not empty, "places whose walk finds nothing: " + ", ".join(empty)
    # and a name the codecs carry is among them
    anthropic_places = places_sent("anthropic")
    assert "system" in anthropic_places["message.role"]
    assert {"document", "tool_result", "server_tool_use"} <= set(anthropic_places["user.content"])
    assert {"custom", "web_search_20250305"} <= set(anthropic_places["tool"])
    assert "adaptive" in anthropic_places["thinking"]
    assert {"item_reference", "reasoning"} <= set(places_sent("responses")["input.item"])
    assert {"namespace", "web_search"} <= set(places_sent("responses")["tool"])
    assert "custom" in places_sent("openai-chat")["tool"]


# -- the instruments --------------------------------------------------------------------------


class _Base(TypedDict, total=False):
    kind: Required[str]
    note: str


class _Child(_Base):  # total: its own keys are required unless marked
    size: int
    hint: NotRequired[str]
    wire_name: Annotated[str, _Alias("wire-name")]


class _Alias:
    """What the SDKs' ``PropertyInfo`` is to the walker: metadata with an ``alias``."""

    def __init__(self, alias: str) -> None:
        self.alias = alias


def test_the_walker_reads_keys_as_the_sdks_write_them() -> None:
    got = {w: (f.name, f.required) for w, f in sdk_types.fields(_Child).items()}
    assert got == {
        "kind": ("kind", True),
        "note": ("note", False),
        "size": ("size", True),
        "hint": ("hint", False),
        "wire-name": ("wire_name", True),
    }
    assert sdk_types.conforms({"kind": "a", "size": 1, "wire-name": "x"}, _Child)
    assert not sdk_types.conforms({"kind": "a", "wire-name": "x"}, _Child)  # size missing
    assert not sdk_types.conforms({"kind": "a", "size": True, "wire-name": "x"}, _Child)


QUICK = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_sdk_bodies_conform_to_the_types_and_are_json(protocol: str) -> None:
    root = sdk_places.ROOTS[protocol]()["request"]

    @QUICK
    @given(params(root, "some-model", omit=header_keys(protocol)))
    def check(kwargs: dict[str, Any]) -> None:
        assert sdk_types.conforms(kwargs, root), kwargs
        body = json.loads(sdk_request(protocol, kwargs).content)  # strict JSON: no NaN
        assert body["model"] == "some-model"
        required = {
            f.wire
            for s in sdk_types.shapes(root)
            for f in sdk_types.fields(s).values()
            if f.required
        }
        assert required - {"stream"} <= set(body)
        text = json.dumps(body, ensure_ascii=False)
        assert not any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)  # no lone surrogates

    check()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_planted_bodies_hold_their_name(protocol: str) -> None:
    root = sdk_places.ROOTS[protocol]()["request"]
    spots = [
        (place, name)
        for place in sdk_places.PLACES[protocol]
        if place.root == "request"
        for name in places_sent(protocol)[place.name]
    ]

    @QUICK
    @given(
        st.sampled_from(spots).flatmap(
            lambda s: st.tuples(st.just(s), planted(protocol, s[0], s[1], "m"))
        )
    )
    def check(drawn: tuple[tuple[sdk_places.Place, str], dict[str, Any]]) -> None:
        (place, name), kwargs = drawn
        assert sdk_types.conforms(kwargs, root), kwargs
        body = sdk_request(protocol, kwargs).json
        assert name in [n for _, n in sdk_places.locate(protocol, place, body)], body

    check()
