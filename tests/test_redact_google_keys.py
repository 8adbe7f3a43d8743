"""Google API keys masked by their shape (``streamscope.redact``), configured or not.

A Gemini client's key is ``AIza`` and 35 characters of ``[0-9A-Za-z_-]``. Covers: such a
key, embedded anywhere in text that does not run on into it, is masked by every way a
:class:`Redactor` masks (text and bytes to ``…`` and its last 4 characters; the
same-length forms to ``*``s and its last 4), with no configured secret at all (a
property over the key's alphabet and the text around it); the rest of the text is kept
as it was; a key inside a longer run of its characters (base64 data) and ``AIza`` as a
word are left alone; a truncated key's prefix at a cut edge is masked; and a log
record that quotes one is masked by the logging filter.
"""

from __future__ import annotations

import io
import logging

from hypothesis import given
from hypothesis import strategies as st

from streamscope.redact import RedactingFilter, Redactor

ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-"
KEY = "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"  # the shape (not a real key)
assert len(KEY) == 39

keys = st.text(ALPHABET, min_size=35, max_size=35).map(lambda rest: "AIza" + rest)
# Text around a key: anything, as long as the character touching the key is not one of
# its own (else the key would run on into a longer token, which is not a key).
around = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=40)
edge = st.characters(codec="utf-8").filter(lambda c: c not in ALPHABET)


def _plain() -> Redactor:
    return Redactor([])  # nothing configured: the shape alone must be enough


def _compose(before: str, left: str, key: str, right: str, after: str) -> str:
    return f"{before}{left}{key}{right}{after}"


@given(keys, around, edge, edge, around)
def test_any_google_key_in_text_is_masked_to_its_last_four(
    key: str, before: str, left: str, right: str, after: str
) -> None:
    text = _compose(before, left, key, right, after)
    out = _plain().text(text)
    assert key not in out
    assert f"{left}…{key[-4:]}{right}" in out


@given(keys, around, edge, edge, around)
def test_any_google_key_in_bytes_is_masked_in_every_form(
    key: str, before: str, left: str, right: str, after: str
) -> None:
    text = _compose(before, left, key, right, after)
    data = text.encode()
    red = _plain()
    same = red.same_length(data)
    assert key.encode() not in same and len(same) == len(data)
    assert (left + "*" * 35 + key[-4:] + right).encode() in same
    masked = red.data(data)
    assert key.encode() not in masked
    assert (left + "…" + key[-4:] + right).encode() in masked
    same_text = red.same_length_text(text)
    assert key not in same_text and len(same_text) == len(text)
    assert left + "*" * 35 + key[-4:] + right in same_text


def test_the_rest_of_the_text_is_kept_as_it_was() -> None:
    text = f'GET /v1beta/models?key={KEY}&alt=sse x-goog-api-key: {KEY}\n{{"k": "{KEY}"}}'
    assert _plain().text(text) == (
        'GET /v1beta/models?key=…MBWY&alt=sse x-goog-api-key: …MBWY\n{"k": "…MBWY"}'
    )
    assert _plain().url(f"https://u:pw@host/v1?key={KEY}") == "https://u:***@host/v1?key=…MBWY"


def test_a_longer_run_of_key_characters_and_the_bare_word_are_not_keys() -> None:
    # base64 data holding "AIza" + 35 of its characters is not a key: a run that goes on
    # is left whole (masking it would corrupt an image a client receives).
    red = _plain()
    for text in (f"x{KEY}", f"{KEY}Q", f"data:image/png;base64,iVBOR{KEY}w0KGgo=", "the AIza word"):
        assert red.text(text) == text
        assert red.same_length(text.encode()) == text.encode()
    data = b"nothing to mask here"
    assert red.same_length(data) is data  # the same object when nothing matched
    assert red.data(data) is data


def test_a_truncated_keys_prefix_at_a_cut_edge_is_masked() -> None:
    red = _plain()
    # Someone else cut the text inside the key: what is left of it is masked.
    assert red.text(f"API key not valid: {KEY[:20]}") == "API key not valid: …"
    # cut() masks before it cuts: a whole key becomes its masked form, then the cut.
    assert red.cut(f"API key not valid: {KEY}. Please pass a valid key.", 25) == (
        "API key not valid: …MBWY."
    )
    assert red.text("the prefix AIza alone") == "the prefix AIza alone"


def test_a_log_record_quoting_a_google_key_is_masked() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RedactingFilter(_plain()))
    log = logging.getLogger("tests.redact.google")
    log.addHandler(handler)
    log.propagate = False
    try:
        log.warning("upstream said: %s", f"API key not valid ({KEY})")
    finally:
        log.removeHandler(handler)
    assert stream.getvalue() == "upstream said: API key not valid (…MBWY)\n"
