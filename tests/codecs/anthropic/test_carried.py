"""What an Anthropic message or block says beyond its canonical fields
(codecs/anthropic/carried.py): a message's fields and usage with no slot, and a block's
extras (a ``tool_use``'s ``caller``), carried by the decoder and written back by the
encoder, so that the client (and its SDK) reads them as the upstream sent them.

The stream's other carried things (deltas and events with no slot) are in
tests/codecs/anthropic/test_stream_decode_carried.py, whose helpers these tests share.
"""

from __future__ import annotations

import json

import anthropic

from tests.codecs.anthropic.contract import decode_frames, encode
from tests.codecs.anthropic.test_stream_decode_carried import END, START, block, frames, relayed
from tests.sdk_clients import _transport


def test_message_fields_with_no_slot_go_back() -> None:
    start = json.loads(json.dumps(START))
    start["message"]["container"] = {"id": "container_1", "expires_at": "2030-01-01T00:00:00Z"}
    start["message"]["usage"]["service_tier"] = "standard"
    end = json.loads(json.dumps(END))
    end[0]["context_management"] = {"applied_edits": [{"type": "clear_tool_uses_20250919"}]}
    end[0]["delta"]["container"] = {"id": "container_1", "expires_at": "2030-01-01T00:00:00Z"}
    end[0]["usage"]["server_tool_use"] = {"web_search_requests": 1, "web_fetch_requests": 0}
    text = {"type": "text", "text": ""}
    got, dec, _ = relayed(start, *block(0, text, {"type": "text_delta", "text": "a"}), *end)
    assert dec.findings == []
    first, last = got[0]["message"], next(p for p in got if p["type"] == "message_delta")
    assert first["container"] == start["message"]["container"]
    assert first["usage"]["service_tier"] == "standard"
    assert last["context_management"] == end[0]["context_management"]
    assert last["delta"]["container"] == end[0]["delta"]["container"]
    assert last["usage"]["server_tool_use"] == {"web_search_requests": 1, "web_fetch_requests": 0}
    assert last["usage"]["output_tokens"] == 7


def test_the_sdk_reads_what_was_carried() -> None:
    tool = {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "f",
        "input": {},
        "caller": {"type": "direct"},
    }
    end = json.loads(json.dumps(END))
    end[0]["usage"]["server_tool_use"] = {"web_search_requests": 1, "web_fetch_requests": 0}
    end[0]["delta"]["stop_reason"] = "tool_use"
    payloads = [START, *block(0, tool, {"type": "input_json_delta", "partial_json": "{}"}), *end]
    events, _ = decode_frames(frames(*payloads))
    body, _ = encode(events)
    client = anthropic.Anthropic(
        api_key="k", base_url="http://sdk.test", http_client=_transport(body)
    )
    with client.messages.stream(model="m", max_tokens=10, messages=[]) as stream:
        final = stream.get_final_message()
    [call] = final.content
    assert call.type == "tool_use" and call.caller is not None and call.caller.type == "direct"
    assert final.usage.server_tool_use is not None
    assert final.usage.server_tool_use.web_search_requests == 1
