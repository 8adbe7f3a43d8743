"""What the Gemini translations share: finish reasons, usage, Google's error envelope,
tool-call ids and thought signatures."""

from __future__ import annotations

import base64

import pytest
from google.genai import types
from hypothesis import given
from hypothesis import strategies as st

from streamscope.codecs.gemini.common import (
    FROM_GEMINI,
    STATUS_CODES,
    error_from_json,
    error_status,
    error_to_json,
    from_gemini,
    new_call_id,
    read_signature,
    signature_for_client,
    to_gemini,
    usage_from_json,
    usage_to_json,
    wire_call_id,
)
from streamscope.model import signature
from streamscope.model.events import Error, Usage


def test_every_finish_reason_the_sdk_knows_has_a_canonical_reason() -> None:
    for value in (r.value for r in types.FinishReason):
        reason = from_gemini(value, made_calls=False)
        assert to_gemini(reason, value) == value  # the native value goes back as it came
    assert from_gemini("MAX_TOKENS", False) == "length"
    assert {from_gemini(v, False) for v in ("SAFETY", "RECITATION", "BLOCKLIST", "SPII")} == {
        "content_filter"
    }
    assert from_gemini("PROHIBITED_CONTENT", False) == "content_filter"
    assert from_gemini("MALFORMED_FUNCTION_CALL", False) == "other"
    assert from_gemini("STOP", made_calls=True) == "tool_calls"
    assert to_gemini("tool_calls", None) == "STOP"
    assert to_gemini("length", "max_tokens") == "MAX_TOKENS"  # (another protocol's native)
    assert to_gemini("content_filter", "STOP") == "SAFETY"  # (a native of another meaning)


def test_every_block_reason_the_sdk_knows_is_a_content_filter_but_the_unspecified() -> None:
    for value in (r.value for r in types.BlockedReason):
        if value not in ("BLOCKED_REASON_UNSPECIFIED", "OTHER"):
            assert FROM_GEMINI[value] == "content_filter"


@given(
    prompt=st.none() | st.integers(0, 10**7),
    candidates=st.none() | st.integers(0, 10**6),
    thoughts=st.none() | st.integers(1, 10**6),
    cached=st.none() | st.integers(1, 10**6),
)
def test_usage_goes_both_ways(
    prompt: int | None, candidates: int | None, thoughts: int | None, cached: int | None
) -> None:
    wire = {
        k: v
        for k, v in {
            "promptTokenCount": prompt,
            "candidatesTokenCount": candidates,
            "thoughtsTokenCount": thoughts,
            "cachedContentTokenCount": cached,
        }.items()
        if v is not None
    }
    usage = usage_from_json(wire)
    if not wire:
        assert usage is None
        return
    assert usage is not None
    assert usage.input_tokens == prompt
    if candidates is not None or thoughts is not None:
        assert usage.output_tokens == (candidates or 0) + (thoughts or 0)  # (reasoning counts)
    back = usage_to_json(usage)
    assert {k: v for k, v in back.items() if k != "totalTokenCount"} == {
        **wire,
        **({"candidatesTokenCount": 0} if thoughts is not None and candidates is None else {}),
    }
    assert back.get("totalTokenCount", 0) == (prompt or 0) + (candidates or 0) + (thoughts or 0)


@pytest.mark.parametrize(
    ("status", "http"),
    [
        ("INVALID_ARGUMENT", 400),
        ("UNAUTHENTICATED", 401),
        ("PERMISSION_DENIED", 403),
        ("NOT_FOUND", 404),
        ("RESOURCE_EXHAUSTED", 429),
        ("INTERNAL", 500),
        ("UNAVAILABLE", 503),
    ],
)
def test_googles_error_envelope_both_ways(status: str, http: int) -> None:
    error = error_from_json({"code": http, "message": "no", "status": status}, "")
    assert error.code == status
    assert error_to_json(error) == {"error": {"code": http, "message": "no", "status": status}}
    assert STATUS_CODES[status] == http


@pytest.mark.parametrize(
    ("error_type", "status"),
    [
        ("invalid_request_error", "INVALID_ARGUMENT"),
        ("authentication_error", "UNAUTHENTICATED"),
        ("permission_error", "PERMISSION_DENIED"),
        ("not_found_error", "NOT_FOUND"),
        ("rate_limit_error", "RESOURCE_EXHAUSTED"),
        ("overloaded_error", "UNAVAILABLE"),
        ("api_error", "INTERNAL"),
    ],
)
def test_another_protocols_error_gets_the_google_status_of_its_kind(
    error_type: str, status: str
) -> None:
    assert error_status(Error("x", error_type)) == status


def test_an_error_object_of_no_known_shape_is_still_an_error() -> None:
    assert error_from_json("boom", "fallback").message == "boom"
    assert error_from_json({"code": 500}, "fallback") == Error("fallback", "api_error", "500")


def test_made_up_call_ids_never_reach_the_wire() -> None:
    made = new_call_id()
    assert wire_call_id(made) is None
    assert wire_call_id("call_abc") == "call_abc"
    assert wire_call_id("") is None


@given(st.text(min_size=1), st.sampled_from(["anthropic", "responses"]), st.booleans())
def test_another_providers_signature_is_base64_and_comes_back(
    sig: str, origin: str, redacted: bool
) -> None:
    wire = signature_for_client(signature.Signed(origin, sig, redacted=redacted))
    base64.b64decode(wire, validate=True)  # what the SDK's bytes field demands
    types.Part.model_validate({"text": "", "thoughtSignature": wire})
    back = read_signature(wire)
    assert (back.origin, back.signature, back.redacted) == (origin, sig, redacted)


def test_geminis_own_signature_is_left_as_it_is() -> None:
    sig = "EqsFCqgFAb4+9vvtAF5n87lB4OGD"
    assert signature_for_client(signature.Signed("gemini", sig)) == sig
    assert read_signature(sig) == signature.Signed("gemini", sig)


def test_usage_with_no_counts_is_none() -> None:
    assert usage_from_json({"trafficType": "PROVISIONED_THROUGHPUT"}) is None
    assert usage_to_json(Usage()) == {}
