"""What the capture masks by place: credential query parameters and a request note's
texts (``capture.masking``; headers: test_recorder_mask_headers.py).

A query parameter is a credential by its name (``key``, ``api_key``, ``access_token``,
``client_secret``, percent-encoded or not): its value keeps only its last 4 characters;
every other part of the URL stays byte for byte.
"""

from __future__ import annotations

from urllib.parse import quote_plus

from hypothesis import given
from hypothesis import strategies as st

from streamscope.capture.masking import mask_notes, mask_query
from streamscope.model.request import RequestNote
from streamscope.redact import Redactor

KEY = "AIzaSyD-query-key-0123456789abcdefghij"
VALUES = st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=9, max_size=40)


def test_a_credential_parameter_keeps_its_last_four_and_the_rest_stays() -> None:
    url = f"/v1beta/models/g:streamGenerateContent?alt=sse&key={KEY}&x=1"
    assert mask_query(url) == "/v1beta/models/g:streamGenerateContent?alt=sse&key=…ghij&x=1"


def test_a_url_without_a_query_is_itself() -> None:
    assert mask_query("/v1/chat/completions") == "/v1/chat/completions"


@given(
    st.sampled_from(["key", "api_key", "API-KEY", "access_token", "client_secret", "apikey"]),
    VALUES,
)
def test_a_parameter_named_as_a_credential_never_shows_its_value(name: str, value: str) -> None:
    masked = mask_query(f"/p?a=b&{quote_plus(name)}={value}&c=d")
    assert value not in masked
    assert masked == f"/p?a=b&{quote_plus(name)}=…{value[-4:]}&c=d"


@given(st.sampled_from(["model", "alt", "stream", "page"]), VALUES)
def test_any_other_parameter_stays_as_it_came(name: str, value: str) -> None:
    url = f"/p?{name}={value}"
    assert mask_query(url) == url


def test_a_notes_texts_are_masked_as_any_stored_text() -> None:
    secret = "sk-proj-note-0123456789abcdef"
    note = RequestNote(f"tools[{secret}]", "dropped", f"named {secret}", instead=secret)
    (masked,) = mask_notes([note], Redactor([secret]))
    assert secret not in f"{masked.field} {masked.why} {masked.instead}"
    assert masked.action == "dropped" and masked.field.startswith("tools[")
