"""Secrets out of text, bytes and logs (``streamscope.redact``).

Covers: ``Redactor.for_config`` masks every local key and every account key in text and
in bytes (to the last four characters), longest first when one secret contains another,
masks secrets shorter than 8 characters only as whole tokens (never inside a word),
masks before it truncates and masks a secret's fragment at a cut edge, masks both parts
of a secret split across two frames (a property over every split), takes the
password of a ``base_url`` as a secret, and leaves other text alone; and
``RedactingFilter`` masks a log message built from ``%`` args and the traceback text of
a logged exception, both through a handler writing to a ``StringIO`` and with ``caplog``.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamscope.config import parse_config
from streamscope.redact import MIN_SECRET, RedactingFilter, Redactor, mask, mask_key_like

LOCAL = "sk-local-Q9w8E7r6T5y4U3i2O1p0AsDfGhJkLzXc"
ACCOUNT_A = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
ACCOUNT_B = "sk-ant-api03-ZyXwVuTsRqPoNmLkJiHgFeDcBa-9876"
SECRETS = [LOCAL, ACCOUNT_A, ACCOUNT_B]

CONFIG = f"""
[proxy]
api_keys = ["{LOCAL}"]

[[upstreams]]
name = "oa"
protocol = "openai-chat"
base_url = "https://api.openai.com/v1"
accounts = [{{api_key = "{ACCOUNT_A}"}}]

[[upstreams]]
name = "an"
protocol = "anthropic"
base_url = "https://api.anthropic.com"
accounts = [{{name = "main", api_key = "{ACCOUNT_B}"}}, {{api_key = "short"}}]
"""


@pytest.fixture
def redactor() -> Redactor:
    return Redactor.for_config(parse_config(CONFIG))


def test_every_configured_secret_is_masked_in_text(redactor: Redactor) -> None:
    text = (
        f"Incorrect API key provided: {ACCOUNT_A}. Local key {LOCAL} was used; "
        f"x-api-key: {ACCOUNT_B} and again {ACCOUNT_A}"
    )
    out = redactor.text(text)
    assert all(s not in out for s in SECRETS)
    assert out == (
        "Incorrect API key provided: …Q7r8. Local key …LzXc was used; "
        "x-api-key: …9876 and again …Q7r8"
    )


def test_every_configured_secret_is_masked_in_bytes(redactor: Redactor) -> None:
    body = (
        b'{"error": {"message": "Invalid key ' + ACCOUNT_B.encode() + b'"}}\n'
        b"authorization: Bearer " + LOCAL.encode() + b"\n" + ACCOUNT_A.encode()
    )
    out = redactor.data(body)
    assert all(s.encode() not in out for s in SECRETS)
    assert (
        out
        == (
            '{"error": {"message": "Invalid key …9876"}}\nauthorization: Bearer …LzXc\n…Q7r8'
        ).encode()
    )


def test_text_without_secrets_is_untouched(redactor: Redactor) -> None:
    text = "nothing secret here: sk-proj is a key's first 7 characters, 'shorter' holds a key"
    assert redactor.text(text) == text
    assert redactor.data(text.encode()) == text.encode()


def test_secrets_shorter_than_eight_characters_are_masked_as_whole_tokens() -> None:
    assert MIN_SECRET == 8
    redactor = Redactor(["short", "1234567", "12345678", "pw1"])
    assert redactor.text("short 1234567 12345678") == "… … …5678"
    assert redactor.data(b"short 1234567 12345678") == "… … …5678".encode()
    # Same length: *s only (a short key shows none of its characters).
    assert redactor.same_length(b'{"k":"short"}') == b'{"k":"*****"}'
    assert redactor.same_length_text("key=pw1;") == "key=***;"
    # Inside a word or a longer token it is left alone: words are not mangled.
    text = "shorter shortly 12345670 x1234567 sk-pw1 pw1_x"
    assert redactor.text(text) == text
    assert redactor.same_length(text.encode()) == text.encode()
    # an account key of five characters in the config is masked where it stands alone
    config = Redactor.for_config(parse_config(CONFIG))
    assert config.text("a shortcut, key=short.") == "a shortcut, key=…."


def test_masking_comes_before_truncation() -> None:
    redactor = Redactor([ACCOUNT_A])
    text = "Incorrect API key provided: " + ACCOUNT_A + " (see the docs)"
    for limit in range(len(text) + 1):
        cut = redactor.cut(text, limit)
        assert len(cut) <= limit + 1
        assert ACCOUNT_A[:MIN_SECRET] not in cut, limit
    # A text someone else cut: a prefix (or suffix) of 8+ characters at its edge.
    assert redactor.text("key: " + ACCOUNT_A[:31]) == "key: …"
    assert redactor.text(ACCOUNT_A[-20:] + " was wrong") == "… was wrong"
    assert redactor.text("key: " + ACCOUNT_A[:7]) == "key: " + ACCOUNT_A[:7]


def test_a_base_url_password_is_a_secret_and_masked_in_urls() -> None:
    config = parse_config(
        CONFIG.replace("https://api.openai.com/v1", "http://bob:hunter2-pw@127.0.0.1:9/v1")
    )
    redactor = Redactor.for_config(config)
    assert redactor.text("pw was hunter2-pw!") == "pw was …2-pw!"
    assert redactor.url("http://bob:hunter2-pw@127.0.0.1:9/v1/x?y=1") == (
        "http://bob:***@127.0.0.1:9/v1/x?y=1"
    )
    assert redactor.url("http://bob@host/a") == "http://bob@host/a"


def test_the_shared_databases_password_is_a_secret() -> None:
    config = parse_config(
        CONFIG + '\n[storage]\nurl = "postgresql://ss:db-Pa55word-77@db:5432/ss"\n'
    )
    redactor = Redactor.for_config(config)
    said = 'FATAL: password "db-Pa55word-77" is wrong'
    assert "db-Pa55word-77" not in redactor.text(said)
    assert b"db-Pa55word-77" not in redactor.same_length(said.encode())


def test_the_longest_secret_is_masked_first() -> None:
    inner = "sk-inner-123456"
    outer = "prefix-" + inner + "-suffix-ABCD"
    for order in ([inner, outer], [outer, inner]):
        redactor = Redactor(order)
        out = redactor.text(f"{outer} and {inner}")
        assert out == "…ABCD and …3456"
        assert redactor.data(f"{outer} | {inner}".encode()) == "…ABCD | …3456".encode()


def test_duplicate_secrets_are_harmless() -> None:
    assert Redactor([ACCOUNT_A, ACCOUNT_A]).text(ACCOUNT_A * 2) == "…Q7r8…Q7r8"


@given(st.text(max_size=40), st.text(max_size=40), st.sampled_from(SECRETS))
def test_no_configured_secret_survives_in_any_text(before: str, after: str, secret: str) -> None:
    redactor = Redactor(SECRETS)
    out = redactor.text(before + secret + after)
    assert secret not in out
    raw = redactor.data((before + secret + after).encode())
    assert secret.encode() not in raw


# -- logging -------------------------------------------------------------------------------


@pytest.fixture
def logged(redactor: Redactor) -> Iterator[tuple[logging.Logger, io.StringIO]]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    handler.addFilter(RedactingFilter(redactor))
    logger = logging.getLogger("streamscope.test_redact")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    try:
        yield logger, stream
    finally:
        logger.removeHandler(handler)
        logger.propagate = True
        logger.setLevel(logging.NOTSET)


def test_filter_masks_a_message_built_from_args(
    logged: tuple[logging.Logger, io.StringIO],
) -> None:
    logger, stream = logged
    logger.info("upstream said %r for key %s (%d%%)", {"key": ACCOUNT_A}, LOCAL, 100)
    out = stream.getvalue()
    assert ACCOUNT_A not in out and LOCAL not in out
    assert out == "INFO upstream said {'key': '…Q7r8'} for key …LzXc (100%)\n"


def test_filter_masks_the_traceback(logged: tuple[logging.Logger, io.StringIO]) -> None:
    logger, stream = logged
    try:
        raise RuntimeError(f"401 from upstream: Incorrect API key provided: {ACCOUNT_B}")
    except RuntimeError:
        logger.exception("request with %s failed", ACCOUNT_A)
    out = stream.getvalue()
    assert all(s not in out for s in SECRETS)
    assert "Traceback (most recent call last)" in out
    assert "RuntimeError: 401 from upstream: Incorrect API key provided: …9876" in out
    assert out.startswith("ERROR request with …Q7r8 failed\n")


def test_filter_with_caplog(redactor: Redactor, caplog: pytest.LogCaptureFixture) -> None:
    caplog.handler.addFilter(RedactingFilter(redactor))
    try:
        with caplog.at_level(logging.WARNING, logger="streamscope.test_redact.caplog"):
            log = logging.getLogger("streamscope.test_redact.caplog")
            empty: dict[str, str] = {}
            try:
                empty[ACCOUNT_A]
            except KeyError:
                log.warning("lookup of %s failed", ACCOUNT_A, exc_info=True)
    finally:
        caplog.handler.removeFilter(caplog.handler.filters[-1])
    assert ACCOUNT_A not in caplog.text
    assert "lookup of …Q7r8 failed" in caplog.text
    assert "KeyError: '…Q7r8'" in caplog.text
    (record,) = caplog.records
    assert record.getMessage() == "lookup of …Q7r8 failed"
    assert record.exc_text is not None and ACCOUNT_A not in record.exc_text


def test_the_filter_masks_stack_text() -> None:
    secret = "sk-stack-0123456789abcdef"
    record = logging.LogRecord("x", logging.WARNING, __file__, 1, "plain", (), None)
    record.stack_info = f'Stack (most recent call last):\n  call(key="{secret}")'
    assert RedactingFilter(Redactor([secret])).filter(record)
    assert record.stack_info == 'Stack (most recent call last):\n  call(key="…cdef")'


@given(
    secret=st.sampled_from(SECRETS),
    cut=st.integers(min_value=MIN_SECRET, max_value=40),
    before=st.text(alphabet=" abc.,", max_size=12),
    after=st.text(alphabet=" abc.,", max_size=12),
)
def test_a_secret_split_across_two_frames_is_masked_in_both_parts(
    secret: str, cut: int, before: str, after: str
) -> None:
    # Two stream deltas, each with one part of the key: a client joining them would
    # have it whole. Each part of 8 characters or more is masked, sizes unchanged.
    cut = min(cut, len(secret) - MIN_SECRET)
    redactor = Redactor(SECRETS)
    head, tail = secret[:cut], secret[cut:]
    # (Each part a token of its own, as a split key's parts are: a run of a key's
    # characters inside a longer word is left alone.)
    first = f'data: {{"delta":"{before} {head}"}}\n\n'.encode()
    second = f'data: {{"delta":"{tail} {after}"}}\n\n'.encode()
    one, two = redactor.same_length(first), redactor.same_length(second)
    assert len(one) == len(first) and len(two) == len(second)
    assert head.encode() not in one and tail.encode() not in two
    joined = one.split(b'"delta":"')[1].split(b'"')[0] + two.split(b'"delta":"')[1]
    assert secret.encode() not in joined.replace(b" ", b"")
    assert before.encode() in one and after.encode() in two  # the rest left alone


def test_a_run_of_a_keys_characters_elsewhere_is_ordinary_text() -> None:
    # A key ending in zeros must not eat the zeros of every timestamp and count, nor a
    # key whose first characters spell a word every such word.
    redactor = Redactor(["sk-local-test0000000000000000000000000", "upstream-key-abcdef"])
    body = b'{"created":1700000000,"id":"sk-local-testing-x","t":"the upstream said"}'
    assert redactor.same_length(body) == body
    assert redactor.same_length(b'{"t":"at 00000000"}') == b'{"t":"at 00000000"}'
    # ... where a split leaves them, they are masked:
    assert redactor.same_length(b'{"t":"the upstream-key"}') == b'{"t":"the ************"}'
    assert redactor.same_length(b'{"t":"0000000000 at"}') == b'{"t":"********** at"}'


def test_mask_shows_only_the_last_four() -> None:
    assert mask("sk-abcdefgh1234") == "…1234"
    assert mask("abc") == mask("abcd") == mask("") == "…"
    assert mask(mask("sk-abcdefgh1234")) == "…1234"  # a mask masks to itself


def test_what_looks_like_a_key_is_masked_in_text_from_elsewhere() -> None:
    said = "Incorrect API key provided: sk-proj-abcdefgh1234. Not Bearer tok.en-5678abcd here"
    assert mask_key_like(said) == "Incorrect API key provided: …1234. Not …abcd here"
    opaque = "a" * 31 + "Z"  # a long opaque run (32 characters)
    assert mask_key_like(f"id {opaque} here") == "id …aaaZ here"
    assert mask_key_like("nothing secret, key-short") == "nothing secret, key-short"
