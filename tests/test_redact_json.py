"""redact_json: the unescaped view and its way back (property-tested), runs of a secret
in the text a stream's deltas carry, and the stream masker's carry and hold-back."""

from __future__ import annotations

import json
import random
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.redact import Redactor
from streamscope.redact_json import HOLD_CHUNKS, unescape

# A key of characters no filler text uses, so any of its characters seen is a leak.
KEY_ALPHABET = string.ascii_uppercase + string.digits + "-"
FILLER = "hello there, " * 3


def _key(seed: int, size: int = 40) -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(KEY_ALPHABET) for _ in range(size))


def _delta(text: str) -> bytes:
    choice = {"index": 0, "delta": {"content": text}, "finish_reason": None}
    chunk = {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def _joined(data: bytes) -> str:
    """The text a Chat client assembles from ``data``."""
    out = ""
    for line in data.split(b"\n"):
        if line.startswith(b"data: {"):
            for choice in json.loads(line[6:])["choices"]:
                out += choice["delta"].get("content") or ""
    return out


def _leaked(shown: str) -> str:
    """What a client shows of the key: its text without the filler and the stars."""
    return shown.replace(FILLER, "").replace("*", "")


def _pieces(key: str, cuts: list[int]) -> list[str]:
    bounds = sorted({c % len(key) for c in cuts} - {0})
    return [key[a:b] for a, b in zip([0, *bounds], [*bounds, len(key)], strict=True)]


def _escaped(text: str, which: set[int]) -> str:
    """``text`` as a JSON string's inside, the characters at ``which`` as \\u escapes."""
    return "".join(
        f"\\u{ord(c):04x}" if i in which else json.dumps(c)[1:-1] for i, c in enumerate(text)
    )


PLAIN = "".join(c for c in string.printable if c not in '"\\' and " " <= c <= "~")


@given(st.text(alphabet=PLAIN, max_size=60), st.sets(st.integers(0, 59)))
def test_the_unescaped_view_is_what_a_json_parser_reads_and_maps_back(
    text: str, which: set[int]
) -> None:
    raw = _escaped(text, which).encode()
    un = unescape(raw)
    assert un.view.decode() == json.loads(f'"{raw.decode()}"') == text
    # Each character of the view maps back to the raw bytes that write it.
    for i, char in enumerate(text):
        written = raw[un.source(i) : un.source(i + 1)].decode()
        assert json.loads(f'"{written}"') == char


def test_an_escaped_backslash_never_starts_an_escape() -> None:
    # \\u0073 is the text \u0073 (a backslash, then u0073), not "s"
    assert unescape(b"a\\\\u0073b").view == b"a\\\\u0073b"
    assert unescape(b"a\\u0073\\/b").view == b"as/b"


@settings(max_examples=200)
@given(st.integers(0, 10**6), st.lists(st.integers(1, 200), max_size=40), st.booleans())
def test_a_key_in_pieces_of_any_size_is_masked_in_captured_bytes(
    seed: int, cuts: list[int], escape: bool
) -> None:
    key = _key(seed)
    redactor = Redactor([key])
    pieces = _pieces(key, cuts)
    stream = _delta(FILLER)
    for p in pieces:
        text = _escaped(p, set(range(0, len(p), 2))) if escape else json.dumps(p)[1:-1]
        stream += _delta("\x00").replace(b"\\u0000", text.encode())
    stream += _delta(FILLER)
    masked = redactor.same_length(stream)
    assert len(masked) == len(stream)  # sizes stay true
    shown = _joined(masked)
    assert shown.startswith(FILLER) and shown.endswith(FILLER)  # the rest is untouched
    # Nothing of the key, but its last 4 when it stood whole (the redactor's mask).
    assert _leaked(shown) in ("", key[-4:]), (shown, pieces)


@settings(max_examples=200)
@given(st.integers(0, 10**6), st.lists(st.integers(1, 200), max_size=40))
def test_a_key_sent_one_piece_a_chunk_shows_at_most_its_first_two_characters(
    seed: int, cuts: list[int]
) -> None:
    key = _key(seed)
    masker = Redactor([key]).stream()
    chunks = [_delta(FILLER), *(_delta(p) for p in _pieces(key, cuts)), _delta(FILLER)]
    sent: list[bytes] = []
    for chunk in chunks:
        sent += masker.feed(chunk)
        assert len(b"".join(sent)) <= sum(map(len, chunks))
    sent += masker.feed(b"data: [DONE]\n\n", more=False)
    assert b"".join(sent).replace(b"*", b"") != b""
    assert len(b"".join(sent)) == sum(map(len, chunks)) + len(b"data: [DONE]\n\n")
    shown = _leaked(_joined(b"".join(sent)))
    assert shown == key[-4:] or (len(shown) <= 2 and key.startswith(shown)), (shown, cuts)


def test_the_stream_masker_holds_back_only_while_a_key_may_be_starting() -> None:
    key = _key(7)
    masker = Redactor([key]).stream()
    assert masker.feed(_delta("plain text")) == [_delta("plain text")]  # not held
    assert masker.feed(_delta("see " + key[:4])) == []  # may begin the key: held
    assert masker.feed(b": keepalive\n\n") != []  # no streamed text: released, unmasked
    assert masker.feed(_delta(key[:5])) == []
    released = masker.feed(_delta(key[5:12]))  # the key goes on: both masked, released
    assert len(released) == 2 and key[:5].encode() not in b"".join(released)
    # Never more than HOLD_CHUNKS chunks at once, whatever the upstream sends.
    masker = Redactor([key]).stream()
    held = [masker.feed(_delta(key[:3])) for _ in range(HOLD_CHUNKS)]
    assert held[:-1] == [[]] * (HOLD_CHUNKS - 1) and len(held[-1]) == HOLD_CHUNKS


def test_words_that_share_a_keys_letters_are_left_alone() -> None:
    key = "sk-upstream-exit-SECRET-0123456789abcdef-zzzz"
    redactor = Redactor([key])
    text = b"".join(_delta(w) for w in ["the", " upstream", " exit", " is", " 0123", "4567"])
    assert redactor.same_length(text) is text
