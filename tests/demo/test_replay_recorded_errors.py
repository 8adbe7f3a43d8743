"""A replayed recording that carries a real provider's error (demo/replay.py,
``mark_recorded_errors``; served by demo/upstream.py): the error's message says it comes
from the recording, so nobody takes a recorded "Incorrect API key" or "Overloaded" for
their own provider's answer. Everything else is replayed byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import anthropic
import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from streamscope.demo.replay import (
    RECORDED,
    ReplayCatalogue,
    builtin_dir,
    mark_recorded_errors,
)
from streamscope.recording import read_recording
from tests.demo.support import demo, open_stream, open_whole
from tests.proxy.demo_support import FAST
from tests.proxy.harness import make_config, proxied

NAME = "replay/mine/overloaded"
NOTE = RECORDED.format(name=NAME)
TEXT_DELTA = (
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}\n\n'
)
ANTHROPIC_ERROR = (
    b"event: error\n"
    b'data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
)
OVERLOADED = (
    b"event: message_start\n"
    b'data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant",'
    b'"model":"claude-x","content":[],"stop_reason":null,"usage":{"input_tokens":3,'
    b'"output_tokens":0}}}\n\n'
    b"event: content_block_start\n"
    b'data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
    + TEXT_DELTA
    + ANTHROPIC_ERROR
)
GEMINI_BODY = (
    b'{"error": {"code": 429, "message": "Resource has been exhausted (e.g. check quota).", '
    b'"status": "RESOURCE_EXHAUSTED"}}\n'
)


def _payload(frame: bytes) -> object:
    [data] = [line[6:] for line in frame.splitlines() if line.startswith(b"data: ")]
    return json.loads(data)


@pytest.mark.parametrize(
    ("frame", "path"),
    [
        (ANTHROPIC_ERROR, ("error", "message")),  # Anthropic's error event
        (  # OpenAI Chat's error chunk
            b'data: {"error":{"message":"Incorrect API key provided: sk-abc.","type":'
            b'"invalid_request_error","code":"invalid_api_key"}}\n\n',
            ("error", "message"),
        ),
        (  # a Responses stream that failed
            b"event: response.failed\n"
            b'data: {"type":"response.failed","response":{"id":"r","status":"failed",'
            b'"error":{"code":"server_error","message":"The server had an error."}}}\n\n',
            ("response", "error", "message"),
        ),
        (  # a Responses error event (its message at the top)
            b'event: error\ndata: {"type":"error","code":"rate_limit_exceeded",'
            b'"message":"Rate limit reached.","param":null}\n\n',
            ("message",),
        ),
    ],
)
def test_an_error_frames_message_says_it_is_recorded_and_nothing_else_changes(
    frame: bytes, path: tuple[str, ...]
) -> None:
    marked = mark_recorded_errors(frame, NAME)
    before, after = _payload(frame), _payload(marked)
    message_before, message_after = before, after
    for key in path:
        message_before, message_after = message_before[key], message_after[key]  # type: ignore[index]
    assert message_after == NOTE + str(message_before)
    assert "replay/mine/overloaded" in str(message_after) and "recorded" in str(message_after)
    # the same envelope otherwise, and the same SSE framing around it
    assert marked.split(b"data: ")[0] == frame.split(b"data: ")[0]
    assert marked.endswith(b"\n\n")
    assert mark_recorded_errors(marked, NAME) == marked  # marked once, however often read


def test_a_whole_error_body_says_it_is_recorded() -> None:
    marked = json.loads(mark_recorded_errors(GEMINI_BODY, NAME))
    assert marked["error"]["message"] == NOTE + "Resource has been exhausted (e.g. check quota)."
    assert marked["error"]["status"] == "RESOURCE_EXHAUSTED"


def test_of_the_shipped_recordings_only_the_provider_error_is_marked() -> None:
    """Every frame of every shipped recording replays byte for byte (an ``"error": null``
    is no error) but the one real provider error the catalogue carries: the
    ``insufficient_quota`` of responses-no-sequence-number.sse, "You exceeded your
    current quota", which a user would otherwise take for their own account's."""
    shipped = [p for p in builtin_dir().rglob("*") if p.suffix in (".sse", ".jsonl", ".json")]
    assert len(shipped) >= 15
    marked = []
    for path in shipped:
        data = path.read_bytes()
        frames = [data] if path.suffix == ".json" else [f.raw for f in read_recording(data).frames]
        for raw in frames:
            if mark_recorded_errors(raw, NAME) != raw:
                marked.append((path.name, _payload(mark_recorded_errors(raw, NAME))))
    # its error event, then its response.failed: both carry the provider's message
    assert [name for name, _ in marked] == ["responses-no-sequence-number.sse"] * 2
    error, failed = (payload for _, payload in marked)
    assert error["error"]["message"].startswith(NOTE + "You exceeded your current quota")  # type: ignore[index]
    assert failed["response"]["error"]["message"].startswith(NOTE + "You exceeded")  # type: ignore[index]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["type", "message", "text", "delta", "x"]), inner, max_size=3
        )
    ),
    max_leaves=12,
)


@given(_json, st.sampled_from([b"", b"event: x\n"]), st.sampled_from([b"\n\n", b"\r\n\r\n"]))
def test_a_frame_holding_no_error_is_left_as_it_was(
    value: object, event: bytes, end: bytes
) -> None:
    if isinstance(value, dict) and value.get("type") == "error":
        value["type"] = "other"
    frame = event + b"data: " + json.dumps(value).encode() + end
    if b'"error"' in frame:  # (the keys drawn never make an error object)
        return
    assert mark_recorded_errors(frame, NAME) == frame
    assert mark_recorded_errors(b"data: {not json\n\n", NAME) == b"data: {not json\n\n"


async def test_the_demo_serves_a_recorded_error_marked_in_a_stream_and_a_body(
    tmp_path: Path,
) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "overloaded.sse").write_bytes(OVERLOADED)
    (tmp_path / "mine" / "quota.json").write_bytes(GEMINI_BODY)
    up = demo(ReplayCatalogue([(tmp_path, "")]))
    _, frames = await open_stream(up, {"model": NAME}, "anthropic")
    raws = [f.raw for _, f in frames]
    assert b"".join(raws[:-1]) == OVERLOADED[: OVERLOADED.index(b"event: error")]
    assert _payload(raws[-1])["error"]["message"] == NOTE + "Overloaded"  # type: ignore[index]
    _, body = await open_whole(up, {"model": "replay/mine/quota"}, "gemini")
    assert json.loads(body)["error"]["message"].startswith(
        RECORDED.format(name="replay/mine/quota")
    )


def test_a_client_shows_the_recorded_error_as_recorded(tmp_path: Path) -> None:
    """Through the proxy, translated to the client's protocol: the anthropic SDK's error
    and an OpenAI Chat stream's error both say the text came from the recording."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "overloaded.sse").write_bytes(OVERLOADED)
    demo_cfg = {"name": "demo", "protocol": "demo", "default": True, "demo": FAST}
    demo_cfg["demo"] = {**FAST, "replay_dirs": [str(tmp_path)]}
    with proxied(make_config([demo_cfg])) as running:
        client = anthropic.Anthropic(api_key=running.key, base_url=running.url, max_retries=0)
        with pytest.raises(anthropic.APIError) as raised:
            with client.messages.stream(
                model=NAME, max_tokens=50, messages=[{"role": "user", "content": "hi"}]
            ) as stream:
                stream.get_final_message()
        assert NOTE + "Overloaded" in str(raised.value)
        body = {"model": NAME, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        with httpx.stream(
            "POST",
            running.v1 + "/chat/completions",
            json=body,
            headers={"authorization": f"Bearer {running.key}"},
            timeout=10,
        ) as r:
            chat = r.read()
        assert (NOTE + "Overloaded").encode() in chat
