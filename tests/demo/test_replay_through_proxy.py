"""Replays through the proxy: ``replay/<name>`` plays a shipped recording.

- repair mode: every shipped recording reaches every SDK client protocol translated, and
  the SDK assembles what the recording says (``expected()`` of tests/translation/sdk_expect.py,
  computed from the recording with our decoder);
- passthrough mode: a client of the recording's own protocol gets its bytes unchanged;
- a user's own file in the data dir's ``replay/`` folder is listed and played at once.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from streamscope.config import Config
from streamscope.demo.replay import RECORDED, builtin_dir, mark_recorded_errors
from streamscope.translation.offline import translate_frames
from tests.proxy.demo_support import CLIENTS, FAST, ask
from tests.proxy.harness import Running, make_config, proxied
from tests.proxy.matrix_support import CLIENT_PROTOCOL
from tests.support import load
from tests.translation.sdk_expect import expected, got

RECORDINGS = sorted(
    p for p in (builtin_dir() / "recordings").iterdir() if p.suffix in (".sse", ".jsonl")
)
ENDPOINT = {
    "openai-chat": "/v1/chat/completions",
    "anthropic": "/v1/messages",
    "responses": "/v1/responses",
}


def _config(mode: str) -> Config:
    demo = {"name": "demo", "protocol": "demo", "default": True, "mode": mode, "demo": FAST}
    return make_config([demo], keepalive_seconds=2.0)


@pytest.fixture(scope="module")
def repair() -> Iterator[Running]:
    with proxied(_config("repair")) as running:
        yield running


@pytest.fixture(scope="module")
def passthrough() -> Iterator[Running]:
    with proxied(_config("passthrough")) as running:
        yield running


def test_the_catalogue_ships_recordings_of_every_sdk_protocol() -> None:
    protocols = {load(p).protocol for p in RECORDINGS}
    assert {"openai-chat", "anthropic", "responses"} <= protocols
    assert len(RECORDINGS) >= 6


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.stem)
def test_every_shipped_recording_replays_to_every_sdk(
    repair: Running, path: Path, client: str
) -> None:
    rec = load(path)
    _, pipeline = translate_frames(rec.frames, rec.protocol, rec.protocol)
    want = expected(pipeline.assembler.response, CLIENT_PROTOCOL[client])
    result = ask(repair, client, f"replay/{path.stem}", stream=True)
    assert got(result) == want


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.stem)
def test_passthrough_replays_the_recorded_bytes_unchanged(passthrough: Running, path: Path) -> None:
    rec = load(path)
    body = {"model": f"replay/{path.stem}", "stream": True, "max_tokens": 50}
    body |= {"messages": [{"role": "user", "content": "hi"}], "input": "hi"}
    if rec.protocol == "responses":
        del body["messages"], body["max_tokens"]
    elif rec.protocol != "anthropic":
        del body["input"]
    response = httpx.post(
        passthrough.url + ENDPOINT[rec.protocol],
        json=body,
        headers={"authorization": f"Bearer {passthrough.key}"},
        timeout=30,
    )
    assert response.status_code == 200
    assert response.content == b"".join(f.raw for f in rec.frames)


def _want(source: Path, protocol: str = "openai-chat") -> object:
    rec = load(source)
    _, pipeline = translate_frames(rec.frames, rec.protocol, rec.protocol)
    return expected(pipeline.assembler.response, protocol)


def _listed(running: Running) -> set[str]:
    r = httpx.get(running.v1 + "/models", headers={"x-api-key": running.key}, timeout=10)
    assert r.status_code == 200
    return {m["id"] for m in r.json()["data"]}


def test_a_users_own_recording_is_listed_and_played(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The data dir's replay/ folder, found through $STREAMSCOPE_DATA_DIR (no replay_dirs).
    data = tmp_path / "data"
    monkeypatch.setenv("STREAMSCOPE_DATA_DIR", str(data))
    folder = data / "replay" / "mine"
    folder.mkdir(parents=True)
    source = RECORDINGS[0]
    (folder / ("copy" + source.suffix)).write_bytes(source.read_bytes())
    config = make_config(
        [{"name": "demo", "protocol": "demo", "default": True, "demo": FAST}], keepalive_seconds=2.0
    )
    assert config.upstreams[0].demo.replay_dirs == []
    with proxied(config) as running:
        assert "replay/mine/copy" in _listed(running)
        assert got(ask(running, "chat", "replay/mine/copy", stream=True)) == _want(source)


def test_a_recording_dropped_in_while_the_proxy_runs_is_listed_and_routed_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    monkeypatch.setenv("STREAMSCOPE_DATA_DIR", str(data))
    # The demo is not the default upstream: replay/<name> reaches it only because the
    # demo's model list has it. The default one is a dead address, so a wrong route fails.
    dead = {
        "name": "elsewhere",
        "protocol": "openai-chat",
        "base_url": "http://127.0.0.1:9/v1",
        "default": True,
        "models": [],
    }
    demo = {"name": "demo", "protocol": "demo", "demo": FAST}  # models_ttl_seconds: 300 s
    config = make_config([demo, dead], keepalive_seconds=2.0)
    source = builtin_dir() / "recordings" / "chat-text-usage.sse"
    with proxied(config) as running:
        before = _listed(running)  # the lists are fetched (and would be cached) now
        assert "demo-chat" in before and "replay/dropped" not in before
        (data / "replay").mkdir(parents=True)
        (data / "replay" / "dropped.sse").write_bytes(source.read_bytes())
        assert "replay/dropped" in _listed(running)
        assert got(ask(running, "chat", "replay/dropped", stream=True)) == _want(source)
        (data / "replay" / "dropped.sse").unlink()  # and gone at once too
        assert "replay/dropped" not in _listed(running)


BROKEN = sorted(p for p in (builtin_dir() / "broken").iterdir() if p.suffix in (".sse", ".json"))
SDK_CLIENT = {"openai-chat": "chat", "anthropic": "messages", "responses": "responses"}


def _sample_protocol(path: Path) -> str:
    from streamscope.demo.replay import body_protocol

    return body_protocol(path.read_bytes()) if path.suffix == ".json" else load(path).protocol


def test_the_catalogue_ships_ten_broken_samples() -> None:
    assert len(BROKEN) == 10


@pytest.mark.parametrize("path", BROKEN, ids=lambda p: p.stem)
def test_passthrough_delivers_a_broken_sample_byte_for_byte(
    passthrough: Running, path: Path
) -> None:
    # What these bytes do to each SDK is pinned in tests/resources/test_replay_catalogue.py.
    protocol = _sample_protocol(path)
    body = {"model": f"replay/broken/{path.stem}", "stream": True, "max_tokens": 50}
    body |= {"messages": [{"role": "user", "content": "hi"}], "input": "hi"}
    if protocol == "responses":
        del body["messages"], body["max_tokens"]
    elif protocol != "anthropic":
        del body["input"]
    response = httpx.post(
        passthrough.url + ENDPOINT[protocol],
        json=body,
        headers={"authorization": f"Bearer {passthrough.key}"},
        timeout=30,
    )
    assert response.status_code == 200
    # byte for byte, but for a real provider's error it carries, marked as recorded
    # (demo/replay.py): only responses-no-sequence-number's insufficient_quota
    sample = path.read_bytes()
    frames = [sample] if path.suffix == ".json" else [f.raw for f in load(path).frames]
    assert b"".join(frames) == sample
    replayed = b"".join(mark_recorded_errors(raw, body["model"]) for raw in frames)
    assert response.content == replayed
    differs = response.content != sample
    assert differs == (path.stem == "responses-no-sequence-number")
    if differs:
        assert RECORDED.format(name=body["model"]).encode() in response.content


@pytest.mark.parametrize("path", BROKEN, ids=lambda p: p.stem)
def test_repair_gives_the_sdk_what_the_undamaged_source_gives(repair: Running, path: Path) -> None:
    from tests.resources.test_replay_catalogue import original

    protocol = _sample_protocol(path)
    kind, *source = original(path.name)
    if kind == "raised":  # the source itself is an error stream: the SDK raises again
        with pytest.raises(Exception, match=source[1][:40].replace("(", r"\(")):
            ask(repair, SDK_CLIENT[protocol], f"replay/broken/{path.stem}", stream=True)
        return
    result = ask(repair, SDK_CLIENT[protocol], f"replay/broken/{path.stem}", stream=True)
    want = source[0]
    for key in ("text", "reasoning", "tool_calls", "usage"):
        assert result.get(key) == want.get(key), key


def _arrivals(running: Running, model: str) -> list[float]:
    """Seconds from the request to each chunk's arrival at the client."""
    import time

    body = {"model": model, "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    started = time.monotonic()
    out = []
    with httpx.stream(
        "POST",
        running.v1 + "/chat/completions",
        json=body,
        headers={"authorization": f"Bearer {running.key}"},
        timeout=30,
    ) as r:
        for _ in r.iter_raw():
            out.append(time.monotonic() - started)
    return out


def test_a_timing_sidecar_gives_the_replay_its_recorded_pace(tmp_path: Path) -> None:
    source = builtin_dir() / "recordings" / "chat-text-usage.sse"
    frames = load(source).frames
    (tmp_path / "paced.sse").write_bytes(source.read_bytes())
    # The recorded stream: everything at once, then the last frame 0.6 s later.
    (tmp_path / "paced.sse.timing").write_text(str([0.0] * (len(frames) - 1) + [0.6]))
    config = make_config(
        [{"name": "demo", "protocol": "demo", "default": True, "demo": FAST}], keepalive_seconds=2.0
    )
    config.upstreams[0].demo.replay_dirs = [str(tmp_path)]
    with proxied(config) as running:
        paced = _arrivals(running, "replay/paced")
    # A lower bound from the request (timing upper bounds, or a span from a first chunk
    # that load can delay, flake on a busy machine): the last frame cannot come sooner.
    # A sidecar that does not fit its frames is ignored: tests/demo/test_replay.py.
    assert paced[-1] >= 0.6
