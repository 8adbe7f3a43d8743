"""Type checks of JSON values, shared by every codec.

Strict checks, for request decoding: each takes a value and its param path in the
client's own terms (``messages[2].content``) and returns the value, typed, or raises
:class:`RequestError` naming that param: ``messages[2].content must be a string``, or
``model is required`` for a missing (None) value. The ``expect_*`` forms want a value;
the ``opt_*`` forms let None through (a field left out or null). Numbers and integers
never accept a bool, though Python's bool is an int.

Tolerant reads, for stream and response decoding (which never raise): :func:`as_int`,
:func:`as_str` and :func:`is_number` give a neutral value for anything of the wrong type.
"""

from __future__ import annotations

from typing import Any, TypeGuard

from streamscope.model.request import JSON, RequestError

# -- strict: request decoding -----------------------------------------------------------


def _wrong(value: Any, param: str, what: str) -> RequestError:
    if value is None:
        return RequestError(f"{param} is required", param)
    return RequestError(f"{param} must be {what}", param)


def request_body(body: Any) -> JSON:
    """The request body, which must be a JSON object (the error names no param)."""
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object")
    return body


def expect_str(value: Any, param: str) -> str:
    if not isinstance(value, str):
        raise _wrong(value, param, "a string")
    return value


def opt_str(value: Any, param: str) -> str | None:
    return None if value is None else expect_str(value, param)


def expect_number(value: Any, param: str) -> float:
    if not is_number(value):
        raise _wrong(value, param, "a number")
    return float(value)


def opt_number(value: Any, param: str) -> float | None:
    return None if value is None else expect_number(value, param)


def expect_int(value: Any, param: str) -> int:
    result = as_int(value)
    if result is None:
        raise _wrong(value, param, "an integer")
    return result


def opt_int(value: Any, param: str) -> int | None:
    return None if value is None else expect_int(value, param)


def expect_bool(value: Any, param: str) -> bool:
    if not isinstance(value, bool):
        raise _wrong(value, param, "a boolean")
    return value


def opt_bool(value: Any, param: str) -> bool | None:
    return None if value is None else expect_bool(value, param)


def expect_object(value: Any, param: str) -> JSON:
    if not isinstance(value, dict):
        raise _wrong(value, param, "an object")
    return value


def opt_object(value: Any, param: str) -> JSON | None:
    return None if value is None else expect_object(value, param)


def expect_list(value: Any, param: str) -> list[Any]:
    if not isinstance(value, list):
        raise _wrong(value, param, "an array")
    return value


def expect_str_or_list(value: Any, param: str) -> str | list[Any]:
    """Content given as plain text or as an array of parts, blocks or items."""
    if not isinstance(value, str | list):
        raise _wrong(value, param, "a string or an array")
    return value


def opt_str_list(value: Any, param: str) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise RequestError(f"{param} must be an array of strings", param)
    return list(value)


# -- tolerant: stream and response decoding ---------------------------------------------


def as_int(value: Any) -> int | None:
    """``value`` if it is a real integer (not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_str(value: Any) -> str:
    """``value`` if it is a string, else ``""``."""
    return value if isinstance(value, str) else ""


def is_number(value: Any) -> TypeGuard[int | float]:
    """An int or float, but not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)
