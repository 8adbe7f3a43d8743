"""The ssig1. envelope: a reasoning signature of one protocol carried through a client of
another, and back (model/signature.py)."""

from __future__ import annotations

import base64

from hypothesis import given
from hypothesis import strategies as st

from streamscope.model import signature
from streamscope.model.signature import PREFIX, Signed

PROTOCOLS = st.sampled_from(["anthropic", "responses", "openai-chat", "lmstudio"])
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=200)


@given(PROTOCOLS, TEXT, st.none() | TEXT.filter(bool), st.booleans())
def test_a_wrapped_signature_comes_back_whole(
    origin: str, sig: str, item: str | None, redacted: bool
) -> None:
    signed = Signed(origin, sig, item, redacted)
    wrapped = signature.wrap(signed)
    assert wrapped.startswith(PREFIX) and wrapped.isascii()  # SDKs keep it as opaque text
    assert signature.unwrap(wrapped) == signed


@given(PROTOCOLS, PROTOCOLS, TEXT.filter(bool))
def test_a_client_gets_its_own_protocols_signature_as_it_is(
    origin: str, client: str, sig: str
) -> None:
    out = signature.for_client(Signed(origin, sig), client)
    if origin == client:
        assert out == sig
    else:
        assert out != sig and signature.read(out, client) == Signed(origin, sig)


@given(PROTOCOLS, TEXT.filter(lambda s: bool(s) and not s.startswith(PREFIX)))
def test_a_signature_with_no_envelope_is_the_clients_own(protocol: str, sig: str) -> None:
    assert signature.unwrap(sig) is None
    assert signature.read(sig, protocol) == Signed(protocol, sig)


def test_nothing_signed_reads_as_nothing() -> None:
    assert signature.read(None, "anthropic") is None
    assert signature.read("", "anthropic") is None


def test_a_broken_envelope_is_taken_as_an_opaque_signature() -> None:
    """A provider's own signature that happens to start like ours, or an envelope cut
    short, is never misread as another origin: it stays the client protocol's."""
    not_json = PREFIX + base64.urlsafe_b64encode(b"not json").decode()
    no_origin = PREFIX + base64.urlsafe_b64encode(b'{"s": "x"}').decode()
    for text in (PREFIX + "%%%", not_json, no_origin, PREFIX):
        assert signature.unwrap(text) is None
        assert signature.read(text, "anthropic") == Signed("anthropic", text)
