"""The redactor's quick look (``Redactor.clean``): a text or bytes it calls clean are
left as they are by every mask, so skipping the masks there changes nothing.

Covers, as properties over texts made of pieces of the secrets (whole, their first or
last characters at either edge, escaped with ``\\u``, split across two deltas), Google
keys and their prefixes, short secrets among words, and other characters: ``text``,
``cut``, ``url``, ``data`` and ``same_length`` give what the redactor gives without the
quick look (a redactor that finds nothing clean: the masks it skips, all run); a text
called clean has none of what a mask begins from, and a text holding a secret, a
fragment of one at an edge, an escape or a Google key is never called clean. The clean
look is what usual header values get (and JSON with no secret in it, its newlines
escaped: an escape that cannot hide a key's character is no reason to look closer).
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.redact import MIN_SECRET, Redactor

# Secrets' characters, and characters of text around them (some of each, to meet).
KEYCHARS = "abcAIz09-_/é"
TEXT = KEYCHARS + ' "\\/:;=u,{}\n'
GOOGLE_TAIL = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-"


class Thorough(Redactor):
    """A redactor without the quick look: every mask runs on every text (the reference)."""

    def clean(self, value: str) -> bool:
        return False

    def clean_bytes(self, value: bytes) -> bool:
        return False


secrets = st.lists(
    st.one_of(
        st.text(KEYCHARS, min_size=1, max_size=7),  # short: masked as whole tokens
        st.text(KEYCHARS, min_size=MIN_SECRET, max_size=15),
        st.text(KEYCHARS, min_size=2 * MIN_SECRET, max_size=30),  # ones split in parts
        # keys of one provider: their first characters shared
        st.text(KEYCHARS, min_size=1, max_size=20).map(lambda rest: "sk-ant-api03-" + rest),
    ),
    max_size=4,
)


def _escaped(text: str) -> str:
    return "".join("\\/" if c == "/" else f"\\u{ord(c):04x}" if c.isascii() else c for c in text)


@st.composite
def texts(draw: st.DrawFn, keys: list[str]) -> str:
    """A text of pieces: of the secrets, Google keys, escapes and other text."""
    pieces = [st.text(TEXT, max_size=8)]
    pieces.append(st.sampled_from(["\\n", "\\\\", "\\/", "\\u00", "\\u0041", "\\u1234"]))
    pieces.append(st.text(GOOGLE_TAIL, min_size=4, max_size=36).map(lambda t: "AIza" + t))
    if keys:
        key = st.sampled_from(keys)
        pieces.append(key)
        pieces.append(key.flatmap(lambda k: st.integers(0, len(k)).map(lambda n: k[:n])))
        pieces.append(key.flatmap(lambda k: st.integers(0, len(k)).map(lambda n: k[n:])))
        pieces.append(key.map(_escaped))
        pieces.append(key.map(lambda k: k.replace("/", "\\/")))  # (its slashes escaped)
        # a key split across two deltas of a stream
        pieces.append(
            key.flatmap(
                lambda k: st.integers(0, len(k)).map(
                    lambda n: json.dumps({"content": k[:n]}) + json.dumps({"content": k[n:]})
                )
            )
        )
    return "".join(draw(st.lists(st.one_of(pieces), max_size=6)))


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[str], str]:
    keys = draw(secrets)
    return keys, draw(texts(keys))


@settings(max_examples=500, deadline=None)
@given(cases())
def test_every_mask_gives_what_it_gives_without_the_quick_look(case: tuple[list[str], str]) -> None:
    keys, text = case
    quick, thorough = Redactor(keys), Thorough(keys)
    assert quick.text(text) == thorough.text(text)
    assert quick.url(text) == thorough.url(text)
    assert quick.cut(text, 12) == thorough.cut(text, 12)
    data = text.encode()
    assert quick.data(data) == thorough.data(data)
    assert quick.same_length(data) == thorough.same_length(data)
    masker, reference = quick.stream(), thorough.stream()
    assert masker.feed(data, more=False) == reference.feed(data, more=False)


@settings(max_examples=300, deadline=None)
@given(
    st.text(KEYCHARS + "//", min_size=MIN_SECRET, max_size=30),
    st.one_of(st.sets(st.integers(0, 29)), st.just("/")),
    st.integers(0, 30),
    st.integers(0, 30),
)
def test_a_key_with_escaped_characters_is_masked_as_without_the_quick_look(
    key: str, which: set[int] | str, start: int, end: int
) -> None:
    # Some of its characters escaped (a slash as \\/, others as \\u00XX; or its slashes
    # only), the rest as they are, and maybe cut at either edge.
    text = "".join(
        _escaped(c) if (c == which if isinstance(which, str) else i in which) else c
        for i, c in enumerate(key)
    )
    text = text[min(start, len(text)) : max(len(text) - end, 0)]
    quick, thorough = Redactor([key]), Thorough([key])
    assert quick.text(text) == thorough.text(text)
    assert quick.same_length(text.encode()) == thorough.same_length(text.encode())
    assert quick.data(text.encode()) == thorough.data(text.encode())


@settings(max_examples=300, deadline=None)
@given(cases())
def test_a_clean_text_holds_nothing_a_mask_begins_from(case: tuple[list[str], str]) -> None:
    keys, text = case
    redactor = Redactor(keys)
    if redactor.clean(text):
        assert "\\u00" not in text and "\\/" not in text and "AIza" not in text
        for key in keys:
            assert key not in text
            if len(key) >= MIN_SECRET:
                assert key[:MIN_SECRET] not in text and key[-MIN_SECRET:] not in text
    data = text.encode()
    if redactor.clean_bytes(data):
        assert b"\\u00" not in data and b"\\/" not in data and b"AIza" not in data
        for key in keys:
            encoded = key.encode()
            assert encoded not in data
            if len(key) >= MIN_SECRET:
                assert encoded[:MIN_SECRET] not in data and encoded[-MIN_SECRET:] not in data


def test_a_text_with_a_secret_or_its_edge_is_never_clean() -> None:
    key = "sk-ant-api03-ZyXwVuTsRqPoNmLkJiHgFeDcBa-9876"
    redactor = Redactor([key, "shrt"])
    for text in (
        f"x {key} y",
        f"a cut {key[:12]}",  # (a truncation left its first characters)
        f"{key[-10:]} after a cut",
        f"escaped: {_escaped(key)}",  # (JSON escapes hide every character)
        "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
        "the shrt key",
    ):
        assert not redactor.clean(text), text
        assert not redactor.clean_bytes(text.encode()), text
        assert redactor.text(text) != text  # (each of them is one a mask changes)


def test_usual_header_values_and_json_are_clean() -> None:
    redactor = Redactor(["sk-ant-api03-ZyXwVuTsRqPoNmLkJiHgFeDcBa-9876", "shrt"])
    for value in ("application/json", "2023-06-01", "127.0.0.1:8080", "text/event-stream"):
        assert redactor.clean(value)
        assert redactor.text(value) is value
    body = b'{"model":"m","messages":[{"role":"user","content":"hi,\\nyou"}],"stream":true}'
    assert redactor.clean_bytes(body)
    assert redactor.same_length(body) is body
