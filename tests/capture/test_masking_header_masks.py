"""The capture writer's header masking with a memory (``capture.masking.HeaderMasks``)
gives exactly what masking each value by name and then with the redactor gives, the
first time a pair is seen and every time after; its memory is bounded and is its
redactor's alone.
"""

from __future__ import annotations

import gc
import weakref

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.capture import masking
from streamscope.capture.flow import Headers
from streamscope.capture.masking import HeaderMasks, header_masks
from streamscope.redact import Redactor
from tests.capture.test_recorder_mask_headers import _one_by_one, flows
from tests.test_redact_clean import Thorough


@settings(max_examples=300, deadline=None)
@given(flows(), st.sampled_from(["text", "bytes", "lists"]))
def test_pairs_masked_with_a_memory_are_masked_as_one_by_one(
    flow: tuple[list[str], Headers, list[str]], shape: str
) -> None:
    keys, headers, _ = flow
    given_pairs: list[object] = list(headers)
    if shape == "bytes":  # (as ASGI gives them; latin-1, as the recorder decodes them)
        headers = [(k, v.encode().decode("latin-1")) for k, v in headers]
        given_pairs = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]
    elif shape == "lists":
        given_pairs = [[k, v] for k, v in headers]
    masks, redactor = HeaderMasks(), Redactor(keys)
    expected = _one_by_one(headers, Thorough(keys))
    assert masks(given_pairs, redactor) == expected
    assert masks(given_pairs, redactor) == expected  # (now from its memory)
    assert masks(list(reversed(given_pairs)), redactor) == list(reversed(expected))


def test_its_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(masking, "REMEMBERED", 8)
    masks, redactor = HeaderMasks(), Redactor(["sk-bounded-0123456789"])
    for i in range(50):
        assert masks([("x-request-id", f"r{i}")], redactor) == [("x-request-id", f"r{i}")]
        assert len(masks._stored) <= 8


def test_one_memory_per_redactor_gone_with_it() -> None:
    key = "sk-first-redactor-0123456789"
    first, second = Redactor([key]), Redactor(["sk-other-0123456789abc"])
    assert header_masks(first) is header_masks(first)
    assert header_masks(first) is not header_masks(second)
    # (the second redactor knows nothing of the first's key: its memory is its own)
    assert header_masks(first)([("x-note", key)], first) == [("x-note", "…6789")]
    assert header_masks(second)([("x-note", key)], second) == [("x-note", key)]
    memory = weakref.ref(header_masks(first))
    del first
    gc.collect()
    assert memory() is None  # (its redactor gone, its memory of pairs went with it)
