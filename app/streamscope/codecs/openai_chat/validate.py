"""Type checks for request decoding: each raises :class:`RequestError` naming the field's
path in the client's terms (``messages[2].content``)."""

from __future__ import annotations

from typing import Any

from streamscope.model.request import JSON, RequestError


def str_field(body: JSON, key: str, path: str, required: bool = False) -> str | None:
    value = body.get(key)
    if value is None:
        if required:
            raise RequestError(f"'{path}' is required", path)
        return None
    if not isinstance(value, str):
        raise RequestError(f"'{path}' must be a string", path)
    return value


def num_field(body: JSON, key: str) -> float | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RequestError(f"'{key}' must be a number", key)
    return float(value)


def int_field(body: JSON, key: str) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise RequestError(f"'{key}' must be an integer", key)
    return value


def bool_field(body: JSON, key: str, path: str | None = None) -> bool | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, bool):
        raise RequestError(f"'{path or key}' must be a boolean", path or key)
    return value


def obj_value(value: Any, path: str) -> JSON:
    if not isinstance(value, dict):
        raise RequestError(f"'{path}' must be an object", path)
    return value


def list_value(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise RequestError(f"'{path}' must be an array", path)
    return value
