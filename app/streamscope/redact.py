"""Keeping secrets out of everything the user sees: messages, logs, error bodies.

Upstreams sometimes echo the key they were sent ("Incorrect API key provided: sk-...");
a :class:`Redactor` replaces every configured secret with its masked form (its last four
characters) before such text is logged, stored or sent to a client.

Secrets of :data:`MIN_SECRET` characters or more are masked wherever they occur. Shorter
ones are masked too, but only as whole tokens (not next to a letter, digit, ``-`` or
``_``), so a four-letter key does not mangle every word that contains it; they are masked
whole (no characters shown). :meth:`Redactor.cut` masks before it truncates, and
:meth:`Redactor.text` also masks a fragment of a secret (:data:`MIN_SECRET` characters
or more) left at either edge of a text someone else truncated.

A secret split in two (across two stream deltas: each frame holds a part, and a client
that joins the deltas would have it whole) is masked in its parts by
:meth:`Redactor.same_length` (the wire's bytes, the capture's): a run of
:data:`MIN_SECRET` characters or more that begins a secret and ends a JSON string, or
ends a secret and begins one — where a split leaves them — for secrets of 16 characters
or more (every split of one leaves a part that long). Of a split secret at most 7
characters stay visible.

Google API keys (``AIza`` and 35 characters of ``[0-9A-Za-z_-]``, as a Gemini client
sends them) are recognised by their shape, configured or not — a user may hand the
proxy their real Google key by mistake, a key the proxy never learns — and masked the
same way wherever a :class:`Redactor` scans, where one stands as a token of its own (not
inside a longer run of those characters, such as base64 data). A truncated one's prefix
(``AIza`` and more) at a text's end is masked by :meth:`Redactor.cut` too; a Google key
split across two deltas is not recognised (its parts have no shape of their own).

What JSON text hides from a search of its bytes (:mod:`streamscope.redact_json`): a secret
written with ``\\u`` escapes is found in the text's unescaped view, and a secret spelled
across a stream's deltas, however short, in the joined text of each field that carries
deltas; :meth:`Redactor.stream` masks one response's chunks across their boundaries.

Some secrets are known by where they stand rather than by their value
(:mod:`streamscope.redact_places`): a header or query parameter whose name says it holds
a credential — :func:`mask_params` masks those of the URLs in free text — and the
password of a URL's userinfo or of a database URL, which :meth:`Redactor.for_config`
takes as secrets.

Most of what a redactor is shown holds no secret: :meth:`Redactor.clean` looks once for
anything a mask begins from (an escape that may hide a key's character, ``AIza``, a short
secret, a secret's first or last :data:`MIN_SECRET` characters), and what holds none of
it is given back as it was, without the masks' searches (a flow's headers, one look for
all of them).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from functools import cached_property
from urllib.parse import unquote_plus

from streamscope.config import Config, ConfigError
from streamscope.redact_json import (
    Needles,
    StreamMasker,
    channel_runs,
    escaped_spans,
    has_escape,
    starred,
)
from streamscope.redact_places import (
    credential_name,
    database_passwords,
    mask_userinfo,
    url_password,
)

MIN_SECRET = 8  # shorter secrets are masked only as whole tokens
_WORD = "A-Za-z0-9_\\-"


def mask(secret: str) -> str:
    """A key as shown, stored or logged: ``…`` and its last 4 (none of a key of 4 or less)."""
    return f"…{secret[-4:]}" if len(secret) > 4 else "…"


_KEY_LIKE = re.compile(  # a prefixed token, a bearer token, a long opaque run
    rf"\b(?:sk|pk|rk|ak|key|token)-[{_WORD}]{{8,}}|\bBearer\s+[{_WORD}.]{{8,}}|\b[{_WORD}]{{32,}}\b"
)


def mask_key_like(text: str) -> str:
    """``text`` with what is shaped like a key masked (a provider's error quoted as is)."""
    return _KEY_LIKE.sub(lambda m: mask(m.group(0)), text)


# The key's shape, as a token of its own (not inside a longer run of its characters).
GOOGLE_KEY = re.compile(f"(?<![{_WORD}])AIza[{_WORD}]{{35}}(?![{_WORD}])")
GOOGLE_KEY_BYTES = re.compile(GOOGLE_KEY.pattern.encode())
# A Google key's prefix that a truncation left at the end of a text.
# (8 characters or more, as a configured secret's fragment: AIza alone shows nothing.)
_GOOGLE_HEAD = re.compile(f"(?<![{_WORD}])AIza[{_WORD}]{{4,34}}\\Z")


def _google_text(value: str, same_length: bool = False) -> str:
    """``value`` with every Google key masked (``…abcd``; ``same_length``: ``*``s and its
    last 4 characters). The same object when there is none."""
    if "AIza" not in value or GOOGLE_KEY.search(value) is None:
        return value
    if same_length:
        return GOOGLE_KEY.sub(lambda m: "*" * 35 + m.group()[-4:], value)
    return GOOGLE_KEY.sub(lambda m: mask(m.group()), value)


def _google_bytes(value: bytes, same_length: bool = False) -> bytes:
    """:func:`_google_text` for bytes."""
    if b"AIza" not in value or GOOGLE_KEY_BYTES.search(value) is None:
        return value
    if same_length:
        return GOOGLE_KEY_BYTES.sub(lambda m: b"*" * 35 + m.group()[-4:], value)
    return GOOGLE_KEY_BYTES.sub(lambda m: mask(m.group().decode()).encode(), value)


def _short_pattern(secrets: list[str]) -> str:
    alternatives = "|".join(re.escape(s) for s in secrets)
    return f"(?<![{_WORD}])(?:{alternatives})(?![{_WORD}])"


# A query string's parameters in free text (a URL in a log line): name=value after ? & ;
_PARAM = re.compile(r"(?<=[?&;])([^=&\s#?;]+)=([^&\s#;\"'<>]*)")


def mask_params(text: str) -> str:
    """``text`` with the value of every credential-named query parameter of the URLs in
    it masked (its last 4 characters), the rest as it was."""
    if "=" not in text:
        return text
    return _PARAM.sub(
        lambda m: (
            f"{m.group(1)}={mask(unquote_plus(m.group(2)))}"
            if m.group(2)[:1] not in ("", "*", "…") and credential_name(m.group(1))
            else m.group()
        ),
        text,
    )


def _storage_url(config: Config) -> str | None:
    """The shared database's URL, from the file or from ``url_env``'s variable (None
    when there is none, or the variable is unset: then there is no password to know)."""
    try:
        return config.storage.database_url()
    except ConfigError:
        return None


class Redactor:
    def __init__(self, secrets: Iterable[str]) -> None:
        unique = {s for s in secrets if s}
        # Longest first, so a key that contains another is masked whole.
        self._secrets = sorted((s for s in unique if len(s) >= MIN_SECRET), key=len, reverse=True)
        self._bytes = [(s.encode(), mask(s).encode()) for s in self._secrets]
        # (secret, its first MIN_SECRET characters, its last ones): to find its parts.
        self._parts = [
            (b, b[:MIN_SECRET], b[-MIN_SECRET:])
            for b in (s.encode() for s in self._secrets)
            if len(b) >= 2 * MIN_SECRET  # (every split leaves a part of 8 or more)
        ]
        short = sorted((s for s in unique if len(s) < MIN_SECRET), key=len, reverse=True)
        self._short: re.Pattern[str] | None = None
        self._short_bytes: re.Pattern[bytes] | None = None
        self._short_secrets = short
        if short:
            self._short = re.compile(_short_pattern(short))
            self._short_bytes = re.compile(_short_pattern(short).encode())

    # (What follows is built when first needed: a redactor of one key, made for each
    # upstream answer, seldom needs it.)

    @cached_property
    def _needles(self) -> Needles:
        """The secrets made ready for run searches."""
        return Needles.of([b for b, _ in self._bytes])

    @cached_property
    def _probe(self) -> tuple[str, ...]:
        """What a text must hold for any mask here to change it (see :meth:`clean`), but
        for an escape: a Google key's "AIza", a short secret, or a secret's first or last
        MIN_SECRET characters (all a whole secret, a fragment at an edge or a part at a
        string's edge holds). Keys of one provider share their first characters: each is
        looked for once."""
        probe = {"AIza", *self._short_secrets}
        probe.update(p for s in self._secrets for p in (s[:MIN_SECRET], s[-MIN_SECRET:]))
        return tuple(probe)

    @cached_property
    def _probe_bytes(self) -> tuple[bytes, ...]:
        """:attr:`_probe` in bytes (of the secrets' bytes: what a part of one holds)."""
        probe = {b"AIza", *(s.encode() for s in self._short_secrets)}
        probe.update(p for b, _ in self._bytes for p in (b[:MIN_SECRET], b[-MIN_SECRET:]))
        return tuple(probe)

    @classmethod
    def for_config(cls, config: Config) -> Redactor:
        keys = [k.get_secret_value() for k in config.proxy.api_keys]
        keys += [k.get_secret_value() for k in config.proxy.admin_keys]
        for upstream in config.upstreams:
            keys += [a.api_key.get_secret_value() for a in upstream.accounts]
            password = url_password(upstream.base_url)
            if password:
                keys.append(password)
        storage = _storage_url(config)  # (the shared database's password: never echoed)
        if storage is not None:
            keys += database_passwords(storage)
        return cls(keys)

    def clean(self, value: str) -> bool:
        """Whether :meth:`text` is sure to leave ``value`` as it is, by a quick look:
        none of what a mask begins from is in it (False: it may change it). Texts joined
        are clean when their join is: a caller masks many short texts with one look."""
        # An escape that may hide a key's character (the unescaped view differs from the
        # text only where one is; an escaped newline hides none): after a backslash.
        if "\\" in value and ("\\u00" in value or "\\/" in value):
            return False
        for part in self._probe:
            if part in value:
                return False
        return True

    def clean_bytes(self, value: bytes) -> bool:
        """:meth:`clean` for bytes: :meth:`data` leaves clean bytes as they are, and
        :meth:`same_length` masks nothing in them but a secret spelled across deltas."""
        if b"\\" in value and (b"\\u00" in value or b"\\/" in value):
            return False
        for part in self._probe_bytes:
            if part in value:
                return False
        return True

    def text(self, value: str) -> str:
        if self.clean(value):
            return value
        if "\\" in value:  # (a secret written with JSON escapes: see its unescaped view)
            value = self._escaped(value.encode(), same_length=False).decode("utf-8", "replace")
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, mask(secret))
        value = _google_text(value)
        if self._short is not None:
            value = self._short.sub("…", value)
        return self._edges(value)

    def _edges(self, value: str) -> str:
        """``value`` with a secret's prefix at its end, or suffix at its start, masked
        (MIN_SECRET characters or more: what a truncation left of a secret)."""
        for secret in self._secrets:
            size = len(secret)
            # The longest prefix of the secret that ends the value: it begins where the
            # secret's first MIN_SECRET characters occur, within its length of the end.
            head = secret[:MIN_SECRET]
            p = value.find(head, max(0, len(value) - size + 1))
            while p != -1:
                if secret.startswith(value[p:]):
                    value = value[:p] + "…"
                    break
                p = value.find(head, p + 1)
            # The longest suffix of the secret that begins the value: it ends where the
            # secret's last MIN_SECRET characters occur, within its length of the start.
            tail = secret[-MIN_SECRET:]
            q = value.rfind(tail, 0, size - 1)
            while q != -1:
                if secret.endswith(value[: q + MIN_SECRET]):
                    value = "…" + value[q + MIN_SECRET :]
                    break
                q = value.rfind(tail, 0, q + MIN_SECRET - 1)
        if "AIza" in value:  # a Google key's prefix (its suffix has no shape to know)
            value = _GOOGLE_HEAD.sub("…", value)
        return value

    def cut(self, value: str, limit: int) -> str:
        """``value`` masked, then cut to ``limit`` characters (a secret the cut would
        split is masked before it is split, so no part of it is left)."""
        return self._edges(self.text(value)[:limit])

    def same_length(self, value: bytes) -> bytes:
        """Bytes with each secret replaced by ``*``s and its last 4 characters (a short
        secret: ``*``s only): the same length, so frame sizes and offsets into captured
        bytes stay true, and a secret split across frames is masked too (in two parts at
        their strings' edges, or in any number of pieces of the text a stream's deltas
        carry: ``*`` for each of their bytes). The same object when nothing matched."""
        spans, _ = channel_runs(value, self._needles)  # (before a part is starred)
        return starred(self._same_length(value), spans)

    def stream(self) -> StreamMasker:
        """A masker for one response's client-bound chunks: :meth:`same_length` of each,
        and a secret spelled across chunks masked too (a chunk that may begin one held
        back until the next shows; :class:`~streamscope.redact_json.StreamMasker`)."""
        return StreamMasker(self._same_length, self._needles)

    def _escaped(self, value: bytes, same_length: bool) -> bytes:
        """``value`` with every secret it writes with JSON escapes masked (``*`` for each
        byte; else its masked form)."""
        if not self._bytes or not has_escape(value):
            return value
        spans = escaped_spans(value, [secret for secret, _ in self._bytes])
        if not spans:
            return value
        out = value
        for start, end, secret in sorted(spans, reverse=True):
            masked = b"*" * (end - start) if same_length else mask(secret.decode()).encode()
            out = out[:start] + masked + out[end:]
        return out

    def _same_length(self, value: bytes) -> bytes:
        """:meth:`same_length` but for a secret spelled across deltas."""
        if self.clean_bytes(value):
            return value
        if b"\\" in value:
            value = self._escaped(value, same_length=True)
        for secret, _ in self._bytes:
            if secret in value:
                value = value.replace(secret, b"*" * (len(secret) - 4) + secret[-4:])
        value = _google_bytes(value, same_length=True)
        for secret, head, tail in self._parts:
            if head in value or tail in value:
                value = _mask_parts(value, secret, head, tail)
        if self._short_bytes is not None and self._short_bytes.search(value):
            value = self._short_bytes.sub(lambda m: b"*" * len(m.group()), value)
        return value

    def same_length_text(self, value: str) -> str:
        """:meth:`same_length` for text."""
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, "*" * (len(secret) - 4) + secret[-4:])
        value = self._parts_text(_google_text(value, same_length=True))
        if self._short is not None and self._short.search(value):
            value = self._short.sub(lambda m: "*" * len(m.group()), value)
        return value

    def _parts_text(self, value: str) -> str:
        """:func:`_mask_parts` of every secret in text (``*`` for each character)."""
        for secret, head, tail in self._parts:
            if head.decode() in value or tail.decode() in value:
                raw = _mask_parts(value.encode(), secret, head, tail)
                value = raw.decode("utf-8", errors="replace")
        return value

    def data(self, value: bytes) -> bytes:
        if self.clean_bytes(value):
            return value
        if b"\\" in value:
            value = self._escaped(value, same_length=False)
        for secret, masked in self._bytes:
            if secret in value:
                value = value.replace(secret, masked)
        value = _google_bytes(value)
        for secret, head, tail in self._parts:
            if head in value or tail in value:
                value = _mask_parts(value, secret, head, tail)
        if self._short_bytes is not None and self._short_bytes.search(value):
            value = self._short_bytes.sub("…".encode(), value)
        return value

    def url(self, value: str) -> str:
        """A URL as it may be stored or shown: secrets and its userinfo password masked."""
        return mask_userinfo(self.text(value))


_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
QUOTE = ord('"')


def _edge_of_string(value: bytes, start: int, end: int, at_end: bool) -> bool:
    """Whether ``value[start:end]`` ends a string (``at_end``: a ``"`` or the end of the
    bytes follows) or begins one (a ``"`` or the start precedes), and stands as a token
    of its own on its other side (no word character there)."""
    before = value[start - 1] if start > 0 else None
    after = value[end] if end < len(value) else None
    if at_end:
        return after in (None, QUOTE) and before not in _WORD_BYTES
    return before in (None, QUOTE) and after not in _WORD_BYTES


def _mask_parts(value: bytes, secret: bytes, head: bytes, tail: bytes) -> bytes:
    """``value`` with the parts of ``secret`` that a split leaves at the edges of two
    strings replaced by ``*``s: ``len(head)`` characters or more that begin it and end a
    string (the first delta's text), or that end it and begin a string (the next one's).
    Only there: a run of a key's characters elsewhere (inside a longer word or number,
    or a key whose first characters spell a word) is ordinary text."""
    out = bytearray(value)
    size, n = len(secret), len(head)
    i = value.find(head)
    while i != -1:
        k = n
        while k < size and i + k < len(value) and value[i + k] == secret[k]:
            k += 1
        if _edge_of_string(value, i, i + k, at_end=True):
            out[i : i + k] = b"*" * k
        i = value.find(head, i + 1)
    j = value.find(tail)
    while j != -1:
        end = j + n
        k = n
        while k < size and end - k - 1 >= 0 and value[end - k - 1] == secret[size - k - 1]:
            k += 1
        if _edge_of_string(value, end - k, end, at_end=False):
            out[end - k : end] = b"*" * k
        j = value.find(tail, j + 1)
    if out == value:
        return value
    return bytes(out)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts the formatted message and any traceback text."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        # (a URL's credential-named query parameters too: a key the proxy never learnt)
        record.msg = mask_params(self.redactor.text(record.getMessage()))
        record.args = ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redactor.text(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redactor.text(record.stack_info)
        return True


__all__ = [
    "GOOGLE_KEY",
    "RedactingFilter",
    "Redactor",
    "mask",
    "mask_key_like",
    "mask_params",
]
