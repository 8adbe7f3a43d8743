"""Checks of what an answer says: a stream that ends in the upstream's own error, and a
whole JSON body (answering a request for no stream) read against its protocol's
non-stream schema — the codec's :meth:`~streamscope.codecs.base.Codec.decode_response`
plus the few fields whose absence leaves a client with nothing to read."""

from __future__ import annotations

from typing import Any

from streamscope.codecs import body_protocol, get_codec
from streamscope.codecs.preview_text import short
from streamscope.lint.stream import Hit, Observed
from streamscope.model.events import Error
from streamscope.redact import mask_key_like

MAX_MESSAGE = 300
"""The longest upstream message quoted in a finding (characters)."""

_TYPE_FIELD = {"openai-chat": ("object", "chat.completion"), "anthropic": ("type", "message")}
_TYPE_FIELD["responses"] = ("object", "response")


def quote(error: Error) -> str:
    """The upstream's error as a finding quotes it: its message on one line, anything
    that looks like a key masked to its last 4 characters, cut to :data:`MAX_MESSAGE`;
    then its type and code."""
    text = " ".join(str(error.message or "").split()) or "(no message)"
    text = mask_key_like(text)
    text = short(text, MAX_MESSAGE)
    kinds = [k for k in (error.error_type, error.code) if k and k != "api_error"]
    return f"{text} ({', '.join(dict.fromkeys(kinds))})" if kinds else text


def upstream_error(obs: Observed) -> list[Hit]:
    """The first error the upstream sent in the stream, with its own message."""
    first = next(((i, e) for i, e in obs.events if isinstance(e, Error)), None)
    if first is None:
        return []
    index, error = first
    if index is None:  # a decoder that reports the error at the end (LM Studio)
        index = _error_frame(obs)
    return [Hit("stream.upstream-error", index, quote(error))]


def _error_frame(obs: Observed) -> int | None:
    """The first frame that carries an error (its event name or its payload says so)."""
    for index, payload in obs.payloads:
        kind = payload.get("type")
        if kind in ("error", "response.failed") or isinstance(payload.get("error"), dict):
            return index
    return next((i for i, f in enumerate(obs.frames) if f.event == "error"), None)


# -- a whole body answering a request for no stream ---------------------------------------


def body(parsed: Any, protocol: str | None) -> tuple[str | None, list[Hit]]:
    """The protocol (detected when None) and the findings of a whole 200 body that
    answers a request for no stream."""
    if protocol is None:
        protocol = body_protocol(parsed)
    if not isinstance(parsed, dict):
        what = "a body that is not JSON" if parsed is None else "a JSON body that is no object"
        return protocol, [Hit("framing.body-not-a-response", None, what)]
    if protocol is None:
        if parsed.get("error"):
            error = get_codec("openai-chat").decode_error(parsed)
            return None, [Hit("framing.error-body-ok-status", None, quote(error))]
        keys = ", ".join(list(parsed)[:6]) or "none"
        what = f"a JSON body that is no protocol's response (keys: {keys})"
        return None, [Hit("framing.body-not-a-response", None, what)]
    codec = get_codec(protocol)
    # An error envelope (Anthropic's is {"type": "error", "error": …}) with status 200.
    if (parsed.get("error") and not codec.is_response(parsed)) or parsed.get("type") == "error":
        said = quote(codec.decode_error(parsed))
        return protocol, [Hit("framing.error-body-ok-status", None, said)]
    hits = _shape(parsed, protocol)
    try:
        response = codec.decode_response(parsed)
    except Exception as exc:  # noqa: BLE001 - a body the codec cannot read at all
        return protocol, [*hits, Hit("framing.body-not-a-response", None, f"unreadable: {exc}")]
    if response.error is not None:
        hits.append(Hit("stream.upstream-error", None, quote(response.error)))
    elif response.usage is None:
        hits.append(Hit("framing.body-without-usage", None, "no `usage` in the body"))
    return protocol, hits


def _shape(parsed: dict[str, Any], protocol: str) -> list[Hit]:
    """What the protocol's response must carry for a client to read an answer."""
    hits: list[Hit] = []
    missing: str | None = None
    if protocol == "openai-chat":
        choices = parsed.get("choices")
        if not isinstance(choices, list):
            missing = "no `choices` array"
        elif not choices:
            missing = "`choices` is empty"
        elif not all(isinstance(c, dict) and isinstance(c.get("message"), dict) for c in choices):
            missing = "a choice has no `message` object"
    elif protocol == "anthropic" and not isinstance(parsed.get("content"), list):
        missing = "no `content` array"
    elif protocol in ("responses", "lmstudio") and not isinstance(parsed.get("output"), list):
        missing = "no `output` array"
    if missing is not None:
        hits.append(Hit("framing.body-not-a-response", None, missing))
    field, want = _TYPE_FIELD.get(protocol, ("", ""))
    if field and parsed.get(field) != want:
        seen = parsed.get(field)
        what = f"`{field}` is {seen!r}" if seen is not None else f"no `{field}`"
        hits.append(Hit("framing.body-wrong-type", None, f"{what}, not {want!r}"))
    return hits
