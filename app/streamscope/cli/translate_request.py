"""``streamscope translate --request --to P [--from auto|P] FILE|-``: a client's request
body as the proxy sends it to an upstream of protocol ``P``, and what that translation
dropped or changed.

The body (a JSON object) is decoded with its protocol's codec and translated for ``P``
as the proxy's plan does it (:func:`~streamscope.translation.request.translate_request`:
streaming, with usage, since the proxy always streams from a translated upstream). The
upstream body goes to stdout as indented JSON; each note goes to stderr as one line,
``streamscope: request: <field> dropped: <why>`` (a note's ``line``, as the window lists
it), unless ``-q``. With the same protocol on both sides the proxy sends the body as
written: it is written back unchanged, with no notes. Exit status 0; 2 with one line on
stderr when the body cannot be read (no such file, not JSON, not an object, refused by
its protocol's decoder) or its protocol cannot be told.

``--from auto`` tells the protocol from the body's shape (:func:`detect_protocol`):

1. ``messages`` (a list) is Anthropic Messages or OpenAI Chat: OpenAI Chat without
   ``max_tokens``, which the Messages API requires. Without ``messages``, a body with a
   name of OpenAI Responses' or LM Studio's native request (``input``, ``instructions``,
   ``previous_response_id``, ``system_prompt``…) is one of those two; else a
   ``contents`` list is Gemini's (its body alone has one); anything else is none (say it
   with ``--from``).
2. Between the two, the one whose codec's request vocabulary (the top-level names its
   SDK's types define: :mod:`streamscope.codecs.vocabulary`) names more of the body's
   top-level keys that the other's does not (``system``, ``thinking`` and
   ``stop_sequences`` are Anthropic's, ``max_completion_tokens`` and ``stream_options``
   Chat's; ``system_prompt`` and ``context_length`` LM Studio's, ``instructions`` and
   ``reasoning`` Responses').
3. On a tie, for ``messages``: the messages' and tools' shapes that only Chat's types
   have — a ``tool`` or ``developer`` role, ``tool_calls``, a ``function`` tool, an
   ``image_url`` part — make it Chat; else it is Anthropic. For the others: Responses.

So an Anthropic body is always told as one, and so is a Responses body; a Chat body with
``max_tokens`` and nothing of Chat's own reads as Anthropic (both APIs would take it).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from streamscope.codecs import get_codec
from streamscope.model.request import RequestError
from streamscope.translation.request import translate_request

# Shapes only OpenAI Chat's types have: roles, a message field, a tool type, a part type.
CHAT_SIGNS = frozenset({"tool", "developer", "tool_calls", "function", "image_url"})


class Unreadable(Exception):
    """A body that cannot be translated: one line, exit status 2."""


def _names(protocol: str) -> frozenset[str]:
    """The top-level request names ``protocol``'s codec declares (mapped or carried)."""
    return frozenset(get_codec(protocol).vocabulary.places.get("request", {}))


def _by_names(keys: set[str], one: str, other: str) -> str | None:
    """Whichever of two protocols names more of ``keys`` that the other does not."""
    own, theirs = _names(one), _names(other)
    score = len(keys & (own - theirs)) - len(keys & (theirs - own))
    return one if score > 0 else other if score < 0 else None


def _chat_shapes(body: dict[str, Any]) -> bool:
    """Whether ``messages`` or ``tools`` have a shape only OpenAI Chat's types have."""
    seen: set[str] = set()
    for message in body.get("messages") or []:
        if isinstance(message, dict):
            seen.add(str(message.get("role")))
            seen.update(k for k in message if k == "tool_calls")
            content = message.get("content")
            for part in content if isinstance(content, list) else []:
                seen.add(str(part.get("type")) if isinstance(part, dict) else "")
    tools = body.get("tools")
    for tool in tools if isinstance(tools, list) else []:
        seen.add(str(tool.get("type")) if isinstance(tool, dict) else "")
    return bool(seen & CHAT_SIGNS)


def detect_protocol(body: Any) -> str | None:
    """The protocol a request body is written in, by its shape (the module docstring's
    rule); None when it is none of them."""
    if not isinstance(body, dict):
        return None
    keys = set(body)
    if isinstance(body.get("messages"), list):
        if "max_tokens" not in body:
            return "openai-chat"
        by_names = _by_names(keys, "anthropic", "openai-chat")
        return by_names or ("openai-chat" if _chat_shapes(body) else "anthropic")
    if (keys - {"model"}) & (_names("responses") | _names("lmstudio")):
        return _by_names(keys, "lmstudio", "responses") or "responses"
    if isinstance(body.get("contents"), list):  # (only Gemini's body has contents)
        return "gemini"
    return None


def read_request_file(file: str) -> dict[str, Any]:
    """The JSON object in ``file`` (``-``: stdin)."""
    try:
        data = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
    except OSError as exc:
        raise Unreadable(f"cannot read {file}: {exc.strerror or exc}") from None
    try:
        body = json.loads(data)
    except UnicodeDecodeError:
        raise Unreadable(f"{file}: not UTF-8 text") from None
    except ValueError as exc:
        raise Unreadable(f"{file}: not JSON ({exc})") from None
    if not isinstance(body, dict):
        raise Unreadable(f"{file}: a request body is a JSON object, not {type(body).__name__}")
    return body


def translate(body: dict[str, Any], source: str, target: str) -> tuple[dict[str, Any], list[str]]:
    """The upstream body the proxy sends for ``body`` (of ``source``) to a ``target``
    upstream, and its notes' lines."""
    client = get_codec(source)
    try:
        request = client.decode_request(body)
    except RequestError as exc:
        where = f" ({exc.param})" if exc.param else ""
        raise Unreadable(f"not a valid {client.title} request: {exc.message}{where}") from None
    if source == target:
        return body, []
    canonical = dataclasses.replace(request, stream=True, include_usage=True)
    translated = translate_request(canonical, get_codec(target))
    return translated.body, [note.line for note in translated.notes]


def run(args: argparse.Namespace) -> int:
    """The request mode of ``streamscope translate`` (see the module docstring)."""
    try:
        if args.non_stream:
            raise Unreadable("--non-stream is for a stream; --request writes a request body")
        body = read_request_file(args.file)
        source = args.source if args.source != "auto" else detect_protocol(body)
        if source is None:
            raise Unreadable(
                f"{args.file}: cannot tell its protocol (no 'messages' list, no 'input'): "
                "say it with --from"
            )
        try:
            upstream, lines = translate(body, source, args.to)
        except Unreadable as exc:
            raise Unreadable(f"{args.file}: {exc}") from None
    except Unreadable as exc:
        print(f"streamscope: error: {exc}", file=sys.stderr)
        return 2
    out = json.dumps(upstream, ensure_ascii=False, indent=2) + "\n"
    sys.stdout.buffer.write(out.encode("utf-8", errors="surrogatepass"))
    sys.stdout.buffer.flush()
    if not args.quiet:
        if source == args.to:
            print(f"streamscope: {source} to {args.to}: sent as written", file=sys.stderr)
        for line in lines:
            print(f"streamscope: request: {line}", file=sys.stderr)
    return 0


__all__ = ["Unreadable", "detect_protocol", "read_request_file", "run", "translate"]
