"""What the capture masks by name or by place before a flow is kept: credential headers
(``Authorization``, ``x-api-key``, ``x-*-token``…) and credential query parameters
(``?key=``, ``api_key``, ``access_token``…) show their last 4 characters; any other value
holding a configured secret is masked by the redactor; a request note's texts are masked
as any stored text. :class:`~streamscope.capture.recorder.FlowRecorder` uses these on the
flows it builds, and :func:`mask_flow` on flows read from files.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Iterable
from dataclasses import replace
from typing import Any
from urllib.parse import unquote_plus

from streamscope.capture.flow import Headers
from streamscope.capture.raw import RawFlow
from streamscope.model.request import RequestNote
from streamscope.redact import Redactor, mask
from streamscope.redact_places import credential_name

SECRET_HEADERS = {
    "authorization",
    "x-api-key",
    "api-key",
    "x-goog-api-key",  # Google's (Gemini's) key header
    "proxy-authorization",
    "cookie",
}
# Query parameters that carry credentials (``?key=`` is how Gemini takes its key).
SECRET_PARAMS = {"key", "apikey", "auth", "password", "passwd", "signature", "sig"}
SECRET_PARAM_ENDINGS = ("_key", "-key", "token", "secret")


def mask_headers(headers: Iterable[tuple[str, str]], redactor: Redactor | None = None) -> Headers:
    """Headers with credential headers masked by name and, given a ``redactor``, any
    value holding a configured secret masked too (``x-debug-key``, ``set-cookie``…).
    The values are almost always clean once masked by name: one look at them all
    (:meth:`~streamscope.redact.Redactor.clean`) spares masking each."""
    out: Headers = []
    for name, value in headers:
        if _secret_header(name):
            scheme, _, token = value.partition(" ")
            # ("Bearer sk-…" keeps its scheme; a cookie's "name=value; …" shows nothing)
            value = f"{scheme} {mask(token)}" if token and scheme.isalpha() else mask(value)
        out.append((name, value))
    # (after: 4 characters may be all of a short key)
    if redactor is not None and not redactor.clean("\n".join(value for _, value in out)):
        out = [(name, redactor.text(value)) for name, value in out]
    return out


class HeaderMasks:
    """:func:`mask_headers` with a memory, for the capture's writer: each header pair as
    it came (text, or bytes as ASGI gives them: decoded here) and the pair as stored. A
    flow's headers are mostly the ones the flows before it had (the same client, the same
    upstream, the same key), and masking them was a tenth of building a flow.

    A pair is masked alone: by name (:func:`mask_headers`), then the redactor's text
    masking, which is what :func:`mask_headers` gives each value (its joined look only
    spares work). Holds at most :data:`REMEMBERED` pairs (then starts again); the pairs
    are kept in memory only, as the flows waiting to be written hold them. One thread;
    one redactor (it is passed on each call, not held: :func:`header_masks` keeps one
    memory per redactor for as long as the redactor lives)."""

    def __init__(self) -> None:
        self._stored: dict[tuple[Any, Any], tuple[str, str]] = {}

    def __call__(self, headers: Iterable[Any], redactor: Redactor) -> Headers:
        stored, out = self._stored, []
        for pair in headers:
            pair = pair if type(pair) is tuple else tuple(pair)
            got = stored.get(pair)
            if got is None:
                got = _masked(pair[0], pair[1], redactor)
                if len(stored) >= REMEMBERED:
                    stored.clear()
                stored[pair] = got
            out.append(got)
        return out


def _masked(name: Any, value: Any, redactor: Redactor) -> tuple[str, str]:
    if isinstance(name, _BYTES):
        name = name.decode("latin-1")
    if isinstance(value, _BYTES):
        value = value.decode("latin-1")
    ((name, value),) = mask_headers([(name, value)])
    return name, redactor.text(value)


REMEMBERED = 4096  # header pairs a HeaderMasks keeps
_BYTES = (bytes, bytearray)
_MASKS: weakref.WeakKeyDictionary[Redactor, HeaderMasks] = weakref.WeakKeyDictionary()


def header_masks(redactor: Redactor) -> HeaderMasks:
    """The :class:`HeaderMasks` of ``redactor`` (one per redactor: a store's)."""
    masks = _MASKS.get(redactor)
    if masks is None:
        masks = _MASKS[redactor] = HeaderMasks()
    return masks


@functools.lru_cache(maxsize=1024)  # (asked per header of every flow: names repeat)
def _secret_header(name: str) -> bool:
    """Whether a header named ``name`` holds a credential (by name: x-*-token, x-*-key…)."""
    return name.lower() in SECRET_HEADERS or credential_name(name)


def _secret_param(name: str) -> bool:
    name = unquote_plus(name).lower()
    return name in SECRET_PARAMS or name.endswith(SECRET_PARAM_ENDINGS) or credential_name(name)


def mask_query(url: str) -> str:
    """``url`` with the value of every credential-like query parameter masked (``key``,
    ``api_key``, ``access_token``, ``client_secret``…) as headers are: its last 4
    characters. The rest of the URL stays as it was."""
    path, sep, query = url.partition("?")
    if not sep:
        return url
    parts = []
    for part in query.split("&"):
        name, eq, value = part.partition("=")
        if eq and value and _secret_param(name):
            part = f"{name}={mask(unquote_plus(value))}"
        parts.append(part)
    return f"{path}?{'&'.join(parts)}"


def mask_notes(notes: list[RequestNote], redactor: Redactor) -> list[RequestNote]:
    """Request notes with every text masked: a note quotes what the client sent (a
    field's or a tool's name), which may hold a secret as any stored text may."""
    text = redactor.text
    return [
        replace(
            n,
            field=text(n.field),
            why=text(n.why),
            instead=text(n.instead) if n.instead is not None else None,
        )
        for n in notes
    ]


def mask_flow(raw: RawFlow, redactor: Redactor) -> None:
    """Mask secrets in a flow that comes from a file as :meth:`FlowRecorder.build` masks
    captured ones (a HAR of browser devtools has its ``Authorization`` headers in clear)."""
    red = redactor.same_length
    for r in (raw.request, raw.upstream_request):
        if r is not None:
            r.url = mask_query(redactor.url(r.url))
            r.headers = mask_headers(r.headers, redactor)
            r.body = red(r.body)
    for leg in (raw.upstream_leg, raw.client_leg):
        leg.headers = mask_headers(leg.headers, redactor)
        leg.data = red(leg.data)
    raw.info.request_notes = mask_notes(raw.info.request_notes, redactor)


__all__ = [
    "SECRET_HEADERS",
    "HeaderMasks",
    "header_masks",
    "SECRET_PARAMS",
    "mask_flow",
    "mask_headers",
    "mask_notes",
    "mask_query",
]
