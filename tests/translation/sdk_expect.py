"""What an official SDK's stream helper should assemble from a translated stream, given the
complete response the source meant (:func:`expected`), and the SDK's result in the same
shape (:func:`got`). The golden translation tests use them, and so do the suites that run
real SDKs through the proxy.
"""

from __future__ import annotations

import json
from typing import Any

import jiter

from streamscope.codecs import get_codec
from streamscope.model.response import Response


def parse_args(text: str, partial: bool) -> Any:
    if not text.strip():
        return {}
    try:
        return json.loads(text)
    except ValueError:
        # A stream cut off inside tool JSON (max_tokens): SDKs that parse partial JSON
        # (anthropic's accumulator) give the partial object; others keep the text.
        # (anthropic's accumulator parses with partial_mode=True: it drops an unfinished
        # trailing string.)
        return jiter.from_json(text.encode(), partial_mode=True) if partial else text


class _Estimate:
    """A token count the upstream did not send, which a protocol requiring numbers gets
    estimated (``model.estimate``): any integer."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, int)

    def __hash__(self) -> int:
        return 0

    def __repr__(self) -> str:
        return "<estimated>"


ESTIMATED = _Estimate()


def _count(value: int | None, target: str) -> Any:
    if value is not None:
        return value
    return ESTIMATED if get_codec(target).requires_usage else 0


def expected(resp: Response, target: str) -> dict[str, Any]:
    c = resp.choice(0)
    refusal_as_text = target == "anthropic"
    u = resp.usage
    return {
        "text": c.text + (c.refusal if refusal_as_text else ""),
        "reasoning": c.reasoning,
        "refusal": "" if refusal_as_text else c.refusal,
        "tool_calls": [
            # (a namespaced tool's call is <namespace>__<name> where there are no namespaces)
            (
                tc.name if target == "responses" else tc.wire_name,
                parse_args(tc.arguments, partial=target == "anthropic"),
            )
            for tc in c.tool_calls
        ],
        "usage": (
            _count(u.input_tokens if u else None, target),
            _count(u.output_tokens if u else None, target),
        ),
    }


def got(result: dict[str, Any]) -> dict[str, Any]:
    out = {k: result.get(k, "") for k in ("text", "reasoning", "refusal", "tool_calls")}
    out["usage"] = result["usage"] or (0, 0)
    return out
