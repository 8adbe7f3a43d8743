"""Type checks for request decoding: each raises RequestError naming the param in the
client's own terms (``input[2].content[0].image_url``)."""

from __future__ import annotations

from typing import Any

from streamscope.model.request import RequestError

JSON = dict[str, Any]


def str_(value: Any, param: str) -> str:
    if not isinstance(value, str):
        raise RequestError(f"{param} must be a string", param)
    return value


def opt_str(value: Any, param: str) -> str | None:
    return None if value is None else str_(value, param)


def number(value: Any, param: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RequestError(f"{param} must be a number", param)
    return float(value)


def int_(value: Any, param: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(f"{param} must be an integer", param)
    return value


def dict_(value: Any, param: str) -> JSON:
    if not isinstance(value, dict):
        raise RequestError(f"{param} must be an object", param)
    return value


def list_(value: Any, param: str) -> list[Any]:
    if not isinstance(value, list):
        raise RequestError(f"{param} must be an array", param)
    return value
