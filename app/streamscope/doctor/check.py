"""A doctor finding (:class:`Check`) and the small text helpers the checks share."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

from streamscope.codecs.preview_text import short

Status = Literal["ok", "warn", "fail", "skip"]


@dataclass(frozen=True, slots=True)
class Check:
    """One finding: ``detail`` says what was seen, ``fix`` what to do (warn and fail)."""

    name: str
    status: Status
    detail: str
    fix: str = ""

    def to_json(self) -> dict[str, str]:
        return asdict(self)


def count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def one_line(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return short(text, limit)


__all__ = ["Check", "Status", "count", "one_line"]
