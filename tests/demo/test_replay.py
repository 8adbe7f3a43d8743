"""Replays: the catalogue of recordings (names, roots, what is ignored) and how the demo
upstream serves them (bytes unchanged, paced; bodies as they are; whole answers; errors).
Every recording is written by the test into ``tmp_path``."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.demo.replay import PREFIX, ReplayCatalogue, body_protocol, builtin_dir
from tests.demo.support import (
    ANTHROPIC_JSONL,
    ANTHROPIC_PAYLOADS,
    ANTHROPIC_TEXT,
    CHAT_BODY,
    CHAT_SSE,
    CHAT_TEXT,
    RESPONSES_BODY,
    decode_frames,
    demo,
    open_stream,
    open_whole,
)


def write(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


@pytest.fixture
def catalogue(tmp_path: Path) -> ReplayCatalogue:
    first = write(
        tmp_path / "first",
        {
            "chat.sse": CHAT_SSE,
            "claude.jsonl": ANTHROPIC_JSONL,
            "body.json": CHAT_BODY,
            "sub/deep.sse": CHAT_SSE,
            "sub/more/deeper.jsonl": ANTHROPIC_JSONL,
            "shadowed.json": CHAT_BODY,
            ".hidden.sse": CHAT_SSE,
            ".cache/inside-a-hidden-folder.sse": CHAT_SSE,
            "notes.txt": b"not a recording",
            "chat.sse.bak": CHAT_SSE,
            "chat.sse.timing": b"[0, 0, 0, 0, 0, 0.001]",
            "garbage.sse": b"this is not\nan SSE stream\n",
            "bad.jsonl": b'{"type": "message_start"}\nnot json\n',
        },
    )
    second = write(tmp_path / "second", {"shadowed.json": RESPONSES_BODY})
    broken = write(tmp_path / "broken", {"empty.sse": b"\n\n", "cut.sse": CHAT_SSE[:-20]})
    roots = [(first, ""), (tmp_path / "missing", ""), (second, ""), (broken, "broken/")]
    return ReplayCatalogue(roots)


NAMES = [
    "replay/bad",
    "replay/body",
    "replay/broken/cut",
    "replay/broken/empty",
    "replay/chat",
    "replay/claude",
    "replay/garbage",
    "replay/shadowed",
    "replay/sub/deep",
    "replay/sub/more/deeper",
]


def test_names_nested_prefixed_and_filtered(catalogue: ReplayCatalogue) -> None:
    assert catalogue.names() == NAMES
    assert all(name.startswith(PREFIX) for name in catalogue.names())


def test_later_roots_win(catalogue: ReplayCatalogue, tmp_path: Path) -> None:
    replay = catalogue.get("replay/shadowed")
    assert replay is not None and replay.path == tmp_path / "second" / "shadowed.json"
    assert catalogue.protocol("replay/shadowed") == "responses"


def test_get_and_protocol(catalogue: ReplayCatalogue, tmp_path: Path) -> None:
    chat = catalogue.get("replay/chat")
    assert chat is not None and chat.path == tmp_path / "first" / "chat.sse"
    assert not chat.is_body and catalogue.get("replay/body").is_body  # type: ignore[union-attr]
    assert catalogue.get("chat") is None and catalogue.get("replay/nope") is None
    assert catalogue.get("demo-chat") is None
    assert catalogue.protocol("replay/chat") == "openai-chat"
    assert catalogue.protocol("replay/sub/more/deeper") == "anthropic"
    assert catalogue.protocol("replay/body") == "openai-chat"
    assert catalogue.protocol("replay/garbage") is None
    assert catalogue.protocol("replay/bad") is None
    assert catalogue.protocol("replay/nope") is None


def test_files_added_later_are_found(catalogue: ReplayCatalogue, tmp_path: Path) -> None:
    write(tmp_path / "second", {"new/arrival.sse": CHAT_SSE})
    assert "replay/new/arrival" in catalogue.names()
    assert catalogue.get("replay/new/arrival") is not None


def test_default_catalogue_roots(tmp_path: Path) -> None:
    default = ReplayCatalogue.default(tmp_path, [str(tmp_path / "extra")])
    assert default.roots == [
        (builtin_dir() / "recordings", ""),
        (builtin_dir() / "broken", "broken/"),
        (tmp_path / "replay", ""),
        (tmp_path / "extra", ""),
    ]
    assert builtin_dir().parts[-2:] == ("resources", "replay")


@pytest.mark.parametrize(
    ("data", "protocol"),
    [
        (CHAT_BODY, "openai-chat"),
        (RESPONSES_BODY, "responses"),
        (json.dumps({"type": "message", "content": []}).encode(), "anthropic"),
        (b"[1, 2]", "openai-chat"),
        (b"not json", "openai-chat"),
    ],
)
def test_body_protocol(data: bytes, protocol: str) -> None:
    assert body_protocol(data) == protocol


# -- served by the demo upstream -----------------------------------------------------------------


@pytest.mark.parametrize("client", PROTOCOLS)
async def test_sse_replay_streams_the_files_bytes(catalogue: ReplayCatalogue, client: str) -> None:
    answer, frames = await open_stream(demo(catalogue), {"model": "replay/chat"}, client)
    assert answer.status == 200 and answer.content_type == "text/event-stream"
    assert b"".join(f.raw for _, f in frames) == CHAT_SSE
    assert await answer.read() == CHAT_SSE
    choice = decode_frames("openai-chat", [f for _, f in frames]).choices[0]
    assert choice.text == CHAT_TEXT and choice.finish == "stop"


async def test_replay_is_paced(catalogue: ReplayCatalogue) -> None:
    up = demo(catalogue, replay_pace_seconds=0.2)
    start = time.monotonic()
    _, frames = await open_stream(up, {"model": "replay/sub/deep"}, "openai-chat")
    times = [start] + [t for t, _ in frames]
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert len(frames) == 6
    assert gaps[0] < 0.2  # the first frame without the pace's wait
    assert all(g >= 0.2 - 0.003 for g in gaps[1:]), gaps


@pytest.mark.parametrize(
    ("timing", "offsets"),
    [
        (b"[0, 0.5, 0.5, 1, 2.25, 3]", [0.0, 0.5, 0.5, 1.0, 2.25, 3.0]),
        (b"[0, 1, 2]", None),  # not one per frame
        (b"[0, 2, 1, 3, 4, 5]", None),  # decreasing
        (b"[0, -1, 1, 2, 3, 4]", None),
        (b'[0, "1", 2, 3, 4, 5]', None),
        (b'{"0": 0}', None),
        (b"not json", None),
        (None, None),
    ],
)
def test_timing_sidecar(tmp_path: Path, timing: bytes | None, offsets: list[float] | None) -> None:
    write(tmp_path, {"rec.sse": CHAT_SSE} | ({"rec.sse.timing": timing} if timing else {}))
    replay = ReplayCatalogue([(tmp_path, "")]).get("replay/rec")
    assert replay is not None and replay.offsets(6) == offsets


async def test_replay_keeps_the_recorded_pace(tmp_path: Path) -> None:
    offsets = [0.0, 0.05, 0.05, 0.1, 0.1, 0.15]
    write(tmp_path, {"rec.sse": CHAT_SSE, "rec.sse.timing": json.dumps(offsets).encode()})
    up = demo(ReplayCatalogue([(tmp_path, "")]), replay_pace_seconds=5.0)  # not used
    start = time.monotonic()
    _, frames = await open_stream(up, {"model": "replay/rec"}, "openai-chat")
    assert b"".join(f.raw for _, f in frames) == CHAT_SSE
    arrivals = [t - start for t, _ in frames]
    assert all(a >= o - 0.003 for a, o in zip(arrivals, offsets, strict=True)), arrivals
    assert arrivals[-1] < 5.0  # the 5 s fixed pace was not used


async def test_jsonl_replay_is_framed_as_its_protocol(catalogue: ReplayCatalogue) -> None:
    _, frames = await open_stream(demo(catalogue), {"model": "replay/claude"}, "anthropic")
    assert [json.loads(f.data or "") for _, f in frames] == ANTHROPIC_PAYLOADS
    assert [f.event for _, f in frames] == [p["type"] for p in ANTHROPIC_PAYLOADS]
    choice = decode_frames("anthropic", [f for _, f in frames]).choices[0]
    assert choice.text == ANTHROPIC_TEXT and choice.finish == "stop"


@pytest.mark.parametrize("stream", [True, False])
async def test_json_body_replay_is_served_as_it_is(
    catalogue: ReplayCatalogue, stream: bool
) -> None:
    async with demo(catalogue).open(
        {"model": "replay/body"},
        stream=stream,
        account=None,
        forward={},
        codec=get_codec("anthropic"),
    ) as answer:
        data = await answer.read()
        batches = [b async for b in answer.batches()]
    assert answer.status == 200 and answer.content_type == "application/json"
    assert answer.headers["content-type"] == "application/json"
    assert data == CHAT_BODY
    assert not any(f.data for batch in batches for f in batch)  # no SSE in it


@pytest.mark.parametrize(
    ("model", "protocol", "text"),
    [("replay/chat", "openai-chat", CHAT_TEXT), ("replay/claude", "anthropic", ANTHROPIC_TEXT)],
)
async def test_whole_answer_from_a_stream_replay(
    catalogue: ReplayCatalogue, model: str, protocol: str, text: str
) -> None:
    answer, data = await open_whole(demo(catalogue), {"model": model}, protocol)
    assert answer.status == 200 and answer.content_type == "application/json"
    assert body_protocol(data) == protocol
    choice = get_codec(protocol).decode_response(json.loads(data)).choices[0]
    assert choice.text == text and choice.finish == "stop"


@pytest.mark.parametrize("model", ["replay/garbage", "replay/bad", "replay/broken/empty"])
@pytest.mark.parametrize("client", PROTOCOLS)
async def test_unreadable_replay_is_a_500_envelope(
    catalogue: ReplayCatalogue, model: str, client: str
) -> None:
    for stream in (True, False):
        async with demo(catalogue).open(
            {"model": model}, stream=stream, account=None, forward={}, codec=get_codec(client)
        ) as answer:
            data = await answer.read()
        assert answer.status == 500 and answer.content_type == "application/json"
        error = get_codec(client).decode_error(json.loads(data))
        assert error.message.startswith(f"cannot replay {model}: ")


async def test_cut_replay_streams_what_there_is(catalogue: ReplayCatalogue) -> None:
    _, frames = await open_stream(demo(catalogue), {"model": "replay/broken/cut"}, "openai-chat")
    assert b"".join(f.raw for _, f in frames) == CHAT_SSE[:-20]
