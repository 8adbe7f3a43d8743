"""A doctor finding (:class:`Check`) and the small text helpers the checks share."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

import httpx

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
    return text if len(text) <= limit else text[: limit - 1] + "…"


def error_message(response: httpx.Response) -> str:
    """The ``error.message`` of a JSON error body (OpenAI's and Anthropic's envelope)."""
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return ""
    message = error.get("message") if isinstance(error, dict) else None
    return message if isinstance(message, str) else ""


__all__ = ["Check", "Status", "count", "error_message", "one_line"]
