"""Findings: what a tolerant decoder noticed was off, instead of crashing.

Decoders at every layer (SSE framing, protocol codecs, request translation) record
findings and carry on. The linter (:mod:`streamscope.lint`) explains them to the user;
tests use them to prove that real recordings decode cleanly (no ``error`` findings).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning", "info"]


@dataclass(slots=True, frozen=True)
class Finding:
    """One observation about a stream or request.

    ``code`` is a stable kebab-case identifier (``unterminated-final-frame``);
    ``frame`` is the index of the wire frame it concerns, when there is one.
    """

    code: str
    severity: Severity
    message: str
    frame: int | None = None

    def __str__(self) -> str:
        where = f" (frame {self.frame})" if self.frame is not None else ""
        return f"{self.severity}: {self.code}: {self.message}{where}"


def errors(findings: list[Finding]) -> list[Finding]:
    """The findings of severity ``error``."""
    return [f for f in findings if f.severity == "error"]
