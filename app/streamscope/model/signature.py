"""Reasoning signatures carried through a client of another protocol.

A provider signs the reasoning it returns (Anthropic's ``signature``, Responses'
``encrypted_content``) and wants it back, verbatim, on the next turn. When the client
speaks another protocol than the upstream, the client's encoder puts the signature where
the client's protocol keeps one, and the client sends it back there. So that the next
request can tell which provider signed it, such a signature is wrapped in an envelope:
``ssig1.`` + base64url of ``{"o": origin protocol, "s": signature, "i": item id, "r": 1
for reasoning the provider returned only encrypted (Anthropic's ``redacted_thinking``)}``.
Every
SDK treats the signature as opaque text, so the envelope reaches the client and comes
back unchanged; the request decoder unwraps it, and only the origin protocol's encoder
sends the signature on (:attr:`~streamscope.model.request.ThinkingPart.origin`).

A signature of the client's own protocol, passed through unchanged, has no envelope.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

PREFIX = "ssig1."


@dataclass(frozen=True, slots=True)
class Signed:
    """A signature and who issued it: ``origin`` (a protocol name), and the reasoning
    item's id where the origin protocol has one (Responses)."""

    origin: str
    signature: str
    item_id: str | None = None
    redacted: bool = False  # the whole reasoning, encrypted (its ``data``), not a signature


def wrap(signed: Signed) -> str:
    """The envelope for a signature of another protocol than the client's."""
    data: dict[str, str | int] = {"o": signed.origin, "s": signed.signature}
    if signed.item_id:
        data["i"] = signed.item_id
    if signed.redacted:
        data["r"] = 1
    raw = json.dumps(data, separators=(",", ":")).encode()
    return PREFIX + base64.urlsafe_b64encode(raw).decode().rstrip("=")


def unwrap(text: str) -> Signed | None:
    """What an envelope holds; None for a signature that is no envelope of ours."""
    if not text.startswith(PREFIX):
        return None
    body = text[len(PREFIX) :]
    try:
        data = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (ValueError, binascii.Error):
        return None
    if not isinstance(data, dict):
        return None
    origin, signature, item = data.get("o"), data.get("s"), data.get("i")
    if not isinstance(origin, str) or not isinstance(signature, str):
        return None
    item_id = item if isinstance(item, str) else None
    return Signed(origin, signature, item_id, data.get("r") == 1)


def read(text: str | None, protocol: str) -> Signed | None:
    """The signature a ``protocol`` client sent back: unwrapped when it is an envelope,
    else the client protocol's own (None when there is none)."""
    if not text:
        return None
    return unwrap(text) or Signed(protocol, text)


def for_client(signed: Signed, client: str) -> str:
    """The signature as a ``client`` protocol client gets it: its own protocol's as it
    is, another's wrapped."""
    return signed.signature if signed.origin == client else wrap(signed)


__all__ = ["PREFIX", "Signed", "for_client", "read", "unwrap", "wrap"]
