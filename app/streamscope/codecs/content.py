"""Wire shapes several protocols spell alike, read in one place: images given as base64
``data:`` URLs, and ``error`` objects (``{message, type, code, param}``).

The other direction of data URLs is :meth:`ImagePart.as_data_url`.
"""

from __future__ import annotations

from typing import Any

from streamscope.model.events import JSON, Error
from streamscope.model.request import ImagePart


def split_data_url(url: str) -> tuple[str | None, str] | None:
    """The media type (None when the URL names none; parameters dropped) and the data of
    a ``data:<media>;base64,<data>`` URL; None for any other URL (a remote one, or a data
    URL that is not base64)."""
    if not url.startswith("data:"):
        return None
    header, sep, data = url[5:].partition(",")
    params = header.split(";")
    if not sep or len(params) < 2 or params[-1] != "base64":
        return None
    return params[0] or None, data


def image_from_url(url: str, detail: str | None = None) -> ImagePart:
    """An image by URL: a base64 data URL becomes inline data (so protocols that take
    only inline images can send it), any other URL stays a URL."""
    inline = split_data_url(url)
    if inline is None:
        return ImagePart(url=url, detail=detail)
    media_type, data = inline
    return ImagePart(data=data, media_type=media_type, detail=detail)


def openai_error_body(error: Error) -> JSON:
    """The OpenAI error envelope (Chat Completions and Responses share it)."""
    return {
        "error": {
            "message": error.message,
            "type": error.error_type,
            "code": error.code,
            "param": error.param,
        }
    }


def error_from_json(
    err: Any, message: str = "unknown error", error_type: str = "api_error"
) -> Error:
    """An :class:`Error` from an ``error`` value, tolerantly: what is missing or of the
    wrong type takes the defaults given; a value that is not an object is the message.
    A ``type`` of ``"error"`` is an event's type, not an error type, and is not taken."""
    if not isinstance(err, dict):
        return Error(str(err) if err else message, error_type)
    text, kind = err.get("message"), err.get("type")
    code, param = err.get("code"), err.get("param")
    return Error(
        message=text if isinstance(text, str) and text else message,
        error_type=kind if isinstance(kind, str) and kind and kind != "error" else error_type,
        code=None if code is None else str(code),
        param=None if param is None else str(param),
    )
