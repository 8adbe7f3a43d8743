"""Keeping secrets out of everything the user sees: messages, logs, error bodies.

Upstreams sometimes echo the key they were sent ("Incorrect API key provided: sk-...");
a :class:`Redactor` replaces every configured secret with its masked form (its last four
characters) before such text is logged, stored or sent to a client.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from streamscope.config import Config, mask

MIN_SECRET = 8  # shorter values would mask ordinary words


class Redactor:
    def __init__(self, secrets: Iterable[str]) -> None:
        unique = {s for s in secrets if len(s) >= MIN_SECRET}
        # Longest first, so a key that contains another is masked whole.
        self._secrets = sorted(unique, key=len, reverse=True)
        self._bytes = [(s.encode(), mask(s).encode()) for s in self._secrets]

    @classmethod
    def for_config(cls, config: Config) -> Redactor:
        keys = [k.get_secret_value() for k in config.proxy.api_keys]
        keys += [k.get_secret_value() for k in config.proxy.admin_keys]
        for upstream in config.upstreams:
            keys += [a.api_key.get_secret_value() for a in upstream.accounts]
        return cls(keys)

    def text(self, value: str) -> str:
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, mask(secret))
        return value

    def same_length(self, value: bytes) -> bytes:
        """Bytes with each secret replaced by ``*``s and its last 4 characters: the same
        length, so frame sizes and offsets into captured bytes stay true, and a secret
        split across two frames is masked too. The same object when nothing matched."""
        for secret, _ in self._bytes:
            if secret in value:
                value = value.replace(secret, b"*" * (len(secret) - 4) + secret[-4:])
        return value

    def same_length_text(self, value: str) -> str:
        """:meth:`same_length` for text."""
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, "*" * (len(secret) - 4) + secret[-4:])
        return value

    def data(self, value: bytes) -> bytes:
        for secret, masked in self._bytes:
            if secret in value:
                value = value.replace(secret, masked)
        return value


class RedactingFilter(logging.Filter):
    """A logging filter that redacts the formatted message and any traceback text."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self.redactor.text(record.getMessage())
        record.args = ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redactor.text(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redactor.text(record.stack_info)
        return True


__all__ = ["RedactingFilter", "Redactor"]
