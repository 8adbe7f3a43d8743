"""The local key as a client sends it: every place a protocol's clients put their key.

OpenAI's clients send ``Authorization: Bearer``, Anthropic's ``x-api-key``, Azure-style
ones ``api-key``, Google's (Gemini CLI, google-genai, @google/genai, @ai-sdk/google)
``x-goog-api-key`` or a ``?key=`` query parameter. The proxy reads whichever came; the
capture masks each of them (``capture.masking``: ``SECRET_HEADERS`` and ``mask_query``).
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from streamscope.proxy.asgi import Scope, header

# Said to a client that sent none (the 401's message).
HOW_TO_SEND = (
    "'Authorization: Bearer <key>', 'x-api-key: <key>', 'api-key: <key>', "
    "'x-goog-api-key: <key>' or '?key=<key>'"
)
HEADERS = (b"x-api-key", b"api-key", b"x-goog-api-key")


def sent_key(scope: Scope, query: bool = True) -> str | None:
    """The key a client sent: a key header, else ``Authorization: Bearer``, else (with
    ``query``) the first ``key`` parameter of the query string. /admin passes
    ``query=False``: its keys have no business in URLs, which end up in histories."""
    for name in HEADERS:
        given = header(scope, name)
        if given:
            return given
    auth = header(scope, b"authorization")
    token = auth[7:].strip() if auth is not None and auth[:7].lower() == "bearer " else ""
    if token:
        return token
    raw = scope.get("query_string", b"")
    if query and b"key=" in raw:
        for name, value in parse_qsl(raw.decode("latin-1")):
            if name == "key":
                return value or None
    return None


__all__ = ["HOW_TO_SEND", "sent_key"]
