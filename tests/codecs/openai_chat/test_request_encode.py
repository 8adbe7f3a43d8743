"""The canonical Request -> a chat.completions request body
(codecs/openai_chat/request_encode.py): a request from another protocol is written in
OpenAI Chat's terms (its orphaned calls answered), with what it cannot say left out,
and a tool choice with no tools is not sent.

Round trips (a body decoded and encoded again) are in tests/codecs/openai_chat/test_request.py.
"""

from __future__ import annotations

from streamscope.model.request import (
    ORPHAN_RESULT_TEXT,
    ImagePart,
    Message,
    Request,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolChoice,
    ToolResultPart,
)
from tests.codecs.openai_chat.test_request import CODEC


def test_tool_choice_without_tools_is_not_sent() -> None:
    req = Request(
        "m", [Message("user", [TextPart("hi")])], tool_choice=ToolChoice("none", parallel=True)
    )
    out = CODEC.encode_request(req)
    assert "tool_choice" not in out and "parallel_tool_calls" not in out


def test_encode_from_foreign_request() -> None:
    req = Request(
        "claude-x",
        [
            Message(
                "user",
                [
                    TextPart("hi", cache_control={"type": "ephemeral"}),
                    ImagePart(data="QUJD", media_type="image/jpeg"),
                ],
            ),
            Message(
                "assistant",
                [
                    ThinkingPart("hmm", signature="sig"),
                    TextPart("calling"),
                    ToolCallPart("t1", "f", "{}"),
                    ToolCallPart("t2", "g"),
                ],
            ),
            Message("tool", [ToolResultPart("t1", [TextPart("ok")])]),
        ],
        system=[TextPart("sys", cache_control={"type": "ephemeral"})],
        stop=["a", "b"],
        top_k=5,
        extra={"anthropic": {"container": "x"}},
    )
    out = CODEC.encode_request(req)
    assert out["messages"][0] == {"role": "system", "content": "sys"}
    assert out["messages"][1]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/jpeg;base64,QUJD"},
    }
    assert out["messages"][2]["content"] == "calling"
    assert [c["id"] for c in out["messages"][2]["tool_calls"]] == ["t1", "t2"]
    # the orphaned call t2 gets a synthetic result right after t1's
    assert out["messages"][4] == {
        "role": "tool",
        "tool_call_id": "t2",
        "content": ORPHAN_RESULT_TEXT,
    }
    assert "cache_control" not in str(out) and "sig" not in str(out)
    assert "top_k" not in out and "container" not in out
    assert out["stop"] == ["a", "b"]
    assert len(req.messages) == 3  # the caller's request is not changed
