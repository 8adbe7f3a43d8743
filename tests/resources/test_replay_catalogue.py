"""The replay catalogue shipped in ``resources/replay``: real recordings, and broken streams
with one classic defect each, proved against the official SDK stream helpers.

- ``recordings/``: every file is a verbatim copy of the shared fixture its ``SOURCES.md``
  row names, decodes without an ``error`` finding, in the expected protocol.
- ``broken/``: every sample is what ``make_broken.py`` derives from its source fixture.
  *Passthrough*: its raw bytes break the client docs/wire-contract.md says they break; where the
  Python SDK is not that client, the test pins exactly what the Python SDK does and its
  docstring quotes the contract for the client that breaks. *Repair*: decoded by our codec
  and encoded again in the same protocol, the official SDK assembles what it assembles from
  the undamaged source fixture (values taken from the fixture, never written here).
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from streamscope.codecs import EncodeOptions, get_codec
from streamscope.findings import errors
from streamscope.model.assemble import to_events
from streamscope.recording import RecordingError, read_recording
from streamscope.translation.offline import translate_frames
from streamscope.translation.pipeline import StreamPipeline
from streamscope.wire import decode_all
from streamscope.wire.frame import Frame
from tests import sdk_clients
from tests.support import FIXTURES, REPO

REPLAY = REPO / "resources" / "replay"
RECORDINGS = REPLAY / "recordings"
BROKEN = REPLAY / "broken"

CLIENTS: dict[str, Callable[[bytes], dict[str, Any]]] = {
    "openai-chat": sdk_clients.openai_chat,
    "anthropic": sdk_clients.anthropic_messages,
    "responses": sdk_clients.openai_responses,
}

# The protocol StreamScope must detect for each shipped recording (LM Studio's recording is
# its OpenAI-compatible /v1/responses output).
RECORDING_PROTOCOLS = {
    "chat-text-usage.sse": "openai-chat",
    "chat-parallel-tool-calls.sse": "openai-chat",
    "deepseek-reasoning-content.jsonl": "openai-chat",
    "anthropic-text.jsonl": "anthropic",
    "anthropic-thinking-signature.jsonl": "anthropic",
    "anthropic-text-then-tool-use.jsonl": "anthropic",
    "responses-text.jsonl": "responses",
    "responses-reasoning-function-call.jsonl": "responses",
    "lmstudio-reasoning-function-call.jsonl": "responses",
}

BROKEN_NAMES = [
    "responses-no-item-id.sse",
    "responses-no-sequence-number.sse",
    "responses-no-in-progress.sse",
    "responses-no-annotations.sse",
    "anthropic-no-event-lines.sse",
    "chat-usage-chunk-without-choices.sse",
    "chat-single-newline.sse",
    "chat-missing-done.sse",
    "chat-tool-call-without-name.sse",
    "chat-non-sse-body.json",
]
SSE_NAMES = [n for n in BROKEN_NAMES if n.endswith(".sse")]


def _generator() -> ModuleType:
    """``make_broken.py``, loaded from its file (resources/ is data, not a package)."""
    spec = importlib.util.spec_from_file_location("make_broken", BROKEN / "make_broken.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_broken", module)  # dataclasses look their module up
    write_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:  # no __pycache__ in resources/: the folder ships as it is
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = write_bytecode
    return module


SAMPLES = {s.name: s for s in _generator().SAMPLES}


def sample_bytes(name: str) -> bytes:
    return (BROKEN / name).read_bytes()


def protocol_of(name: str) -> str:
    return str(SAMPLES[name].protocol)


# -- what an SDK makes of a stream ------------------------------------------------------------


def outcome(protocol: str, body: bytes) -> tuple[Any, ...]:
    """The official SDK helper's result, or the error it raised (type and message)."""
    try:
        return ("assembled", CLIENTS[protocol](body))
    except Exception as exc:  # noqa: BLE001 - the error is the outcome being compared
        return ("raised", type(exc).__name__, str(exc))


def native_bytes(path: Path) -> bytes:
    """A recording's wire bytes (``.jsonl`` framed as its protocol frames it)."""
    raw = b"".join(f.raw for f in read_recording(path.read_bytes()).frames)
    return raw if raw.endswith(b"\n\n") else raw.rstrip(b"\n") + b"\n\n"


@cache
def original(name: str) -> tuple[Any, ...]:
    """What the SDK assembles from the undamaged recording a sample was derived from."""
    sample = SAMPLES[name]
    return outcome(sample.protocol, native_bytes(FIXTURES / sample.source))


def openai_client(body: bytes, content_type: str = "text/event-stream") -> openai.OpenAI:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=body, headers={"content-type": content_type})

    transport = httpx2.Client(transport=httpx2.MockTransport(handler))
    return openai.OpenAI(api_key="sk-test", base_url="http://sdk.test/v1", http_client=transport)


def responses_events(body: bytes) -> tuple[list[Any], Exception | None]:
    """The events openai-python's ``responses.stream()`` yields, and what it raised."""
    events: list[Any] = []
    try:
        with openai_client(body).responses.stream(model="m", input="hi") as stream:
            for event in stream:
                events.append(event)
    except Exception as exc:  # noqa: BLE001 - returned for the test to check
        return events, exc
    return events, None


def chat_events(body: bytes) -> tuple[list[Any], Exception | None]:
    """The events openai-python's ``chat.completions.stream()`` yields, and what it raised."""
    events: list[Any] = []
    messages: Any = [{"role": "user", "content": "hi"}]
    try:
        with openai_client(body).chat.completions.stream(model="m", messages=messages) as stream:
            for event in stream:
                events.append(event)
    except Exception as exc:  # noqa: BLE001 - returned for the test to check
        return events, exc
    return events, None


def original_text(name: str) -> str:
    kind, result = original(name)
    assert kind == "assembled"
    return str(result["text"])


# -- the recordings ---------------------------------------------------------------------------

RECORDING_FILES = sorted(p.name for p in RECORDINGS.iterdir() if p.name != "SOURCES.md")


def sources_rows() -> dict[str, str]:
    """recording file -> the shared fixture its SOURCES.md row says it was copied from."""
    text = (RECORDINGS / "SOURCES.md").read_text(encoding="utf-8")
    return dict(re.findall(r"^\| `([^`]+)` \| `([^`]+)` \|", text, flags=re.M))


def test_the_catalogue_covers_the_sdk_protocols_and_lmstudio() -> None:
    assert RECORDING_FILES == sorted(RECORDING_PROTOCOLS)
    assert set(RECORDING_PROTOCOLS.values()) == set(CLIENTS)
    assert any(name.startswith("lmstudio-") for name in RECORDING_FILES)
    for name in RECORDING_FILES:
        # The stem becomes the model name `replay/<stem>` that users type.
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*\.(sse|jsonl)", name), name


def test_every_recording_is_attributed_in_sources() -> None:
    assert sorted(sources_rows()) == RECORDING_FILES


@pytest.mark.parametrize("name", RECORDING_FILES)
def test_recording_is_a_verbatim_copy_of_its_attributed_fixture(name: str) -> None:
    source = FIXTURES / sources_rows()[name]
    assert (RECORDINGS / name).read_bytes() == source.read_bytes()
    # ...and SOURCES.md carries that fixture's origin and licence.
    shared = (FIXTURES / "SOURCES.md").read_text(encoding="utf-8")
    row = next(line for line in shared.splitlines() if f"| `{sources_rows()[name]}` |" in line)
    origin, licence = row.split(" | ")[5:7]
    ours = (RECORDINGS / "SOURCES.md").read_text(encoding="utf-8")
    assert f"| {origin} | {licence} |" in ours


@pytest.mark.parametrize("name", RECORDING_FILES)
def test_recording_decodes_without_error_in_its_protocol(name: str) -> None:
    rec = read_recording((RECORDINGS / name).read_bytes())
    assert rec.protocol == RECORDING_PROTOCOLS[name]
    assert errors(rec.findings) == []
    _, pipeline = translate_frames(rec.frames, rec.protocol, rec.protocol)
    assert errors(pipeline.decoder.findings) == []
    choice = pipeline.assembler.response.choice(0)
    assert choice.text or choice.tool_calls


# -- the broken samples: what they are --------------------------------------------------------


def test_the_broken_catalogue_has_one_sample_per_cause() -> None:
    on_disk = sorted(p.name for p in BROKEN.iterdir() if p.suffix in (".sse", ".json"))
    assert on_disk == sorted(BROKEN_NAMES) == sorted(SAMPLES)
    readme = (BROKEN / "README.md").read_text(encoding="utf-8")
    for name in BROKEN_NAMES:
        assert f"| `{name}` |" in readme


@pytest.mark.parametrize("name", BROKEN_NAMES)
def test_broken_sample_is_what_the_generator_derives(name: str) -> None:
    assert sample_bytes(name) == SAMPLES[name].render()


def _typed(frames: list[Frame]) -> list[tuple[str | None, str]]:
    return [(f.event, json.loads(f.data or "")["type"]) for f in frames]


@pytest.mark.parametrize("name", SSE_NAMES)
def test_broken_sample_is_wire_bytes_but_for_its_defect(name: str) -> None:
    frames = decode_all(sample_bytes(name))
    assert all(f.terminated and f.data is not None for f in frames)
    if name == "chat-single-newline.sse":
        # The defect itself: by the SSE spec the whole stream is one event.
        assert len(frames) == 1
        return
    assert all(f.raw.endswith(b"\n\n") for f in frames)
    if protocol_of(name) == "openai-chat":
        done = [f.data == "[DONE]" for f in frames]
        assert done == [False] * (len(frames) - 1) + [name != "chat-missing-done.sse"]
        return
    typed = _typed(frames)
    if name == "anthropic-no-event-lines.sse":
        assert {event for event, _ in typed} == {None}
        assert "ping" not in {kind for _, kind in typed}
    else:
        assert all(event == kind for event, kind in typed)


# -- passthrough: the raw bytes against the official SDK --------------------------------------

PASSTHROUGH: dict[str, Callable[[str], None]] = {}


def passthrough(name: str) -> Callable[[Callable[[str], None]], Callable[[str], None]]:
    def register(check: Callable[[str], None]) -> Callable[[str], None]:
        PASSTHROUGH[name] = check
        return check

    return register


@passthrough("responses-no-item-id.sse")
def _no_item_id(name: str) -> None:
    """Breaks the AI SDK (Cherry Studio), not openai-python. docs/wire-contract.md#openai-responses:
    the AI SDK drops a text delta that has no `item_id` without a word, so
    nothing renders and nothing is reported. openai-python places deltas by
    output_index/content_index: its delta events carry ``item_id=None`` and it assembles the
    full text."""
    body = sample_bytes(name)
    events, raised = responses_events(body)
    assert raised is None
    deltas = [e for e in events if e.type == "response.output_text.delta"]
    assert deltas and all(e.item_id is None for e in deltas)
    assert deltas[-1].snapshot == original_text(name)
    assert outcome("responses", body) == original(name)


@passthrough("responses-no-sequence-number.sse")
def _no_sequence_number(name: str) -> None:
    """Breaks the AI SDK, not openai-python. docs/wire-contract.md#openai-responses:
    every event has a `sequence_number` and the AI SDK insists on it for
    `error` and `response.failed` —
    exactly the frames of this early failure, so Cherry Studio shows a schema error instead
    of the provider's message. openai-python yields the lifecycle events with
    ``sequence_number=None`` and raises ``APIError`` with the provider's message, as for the
    original stream."""
    body = sample_bytes(name)
    events, raised = responses_events(body)
    assert [(e.type, e.sequence_number) for e in events] == [
        ("response.created", None),
        ("response.in_progress", None),
    ]
    assert isinstance(raised, openai.APIError)
    assert original(name)[:2] == ("raised", "APIError")
    assert outcome("responses", body) == original(name)


@passthrough("responses-no-in-progress.sse")
def _no_in_progress(name: str) -> None:
    """docs/wire-contract.md records no client that needs `response.in_progress` (its rule is
    "`response.created` first"); it is shipped as a classic suspect (clients that expect
    OpenAI's exact event order). openai-python does not break: it yields the same
    events minus `response.in_progress` and assembles the full text and usage."""
    body = sample_bytes(name)
    events, raised = responses_events(body)
    source, _ = responses_events(native_bytes(FIXTURES / SAMPLES[name].source))
    assert raised is None
    assert [e.type for e in events] == [e.type for e in source if e.type != "response.in_progress"]
    assert outcome("responses", body) == original(name)


@passthrough("responses-no-annotations.sse")
def _no_annotations(name: str) -> None:
    """Strict Responses clients. docs/wire-contract.md#openai-responses:
    every `output_text` part has `annotations: []`. openai-python assembles the full text, but
    its final ``output_text`` part has ``annotations = None`` where the original has ``[]``:
    code that iterates ``part.annotations`` (citations) raises TypeError."""
    body = sample_bytes(name)
    assert outcome("responses", body) == original(name)
    with openai_client(body).responses.stream(model="m", input="hi") as stream:
        final = stream.get_final_response()
    with openai_client(native_bytes(FIXTURES / SAMPLES[name].source)).responses.stream(
        model="m", input="hi"
    ) as stream:
        source = stream.get_final_response()
    assert final.output[0].content[0].annotations is None
    assert source.output[0].content[0].annotations == []


@passthrough("anthropic-no-event-lines.sse")
def _no_event_lines(name: str) -> None:
    """Breaks anthropic-python (and the Node SDK). docs/wire-contract.md#anthropic-messages:
    every frame has an `event:` line equal to the payload's `type`; both
    official SDKs ignore frames without one, so a data-only stream reads as nothing. It
    fails with a bare AssertionError."""
    client = anthropic.Anthropic(
        api_key="sk-test",
        base_url="http://sdk.test",
        http_client=httpx2.Client(
            transport=httpx2.MockTransport(
                lambda request: httpx2.Response(
                    200, content=sample_bytes(name), headers={"content-type": "text/event-stream"}
                )
            )
        ),
    )
    messages: Any = [{"role": "user", "content": "hi"}]
    with client.messages.stream(model="m", max_tokens=64, messages=messages) as stream:
        assert list(stream) == []
        with pytest.raises(AssertionError):
            stream.get_final_message()
    with pytest.raises(AssertionError):
        sdk_clients.anthropic_messages(sample_bytes(name))
    assert original(name)[0] == "assembled"


@passthrough("chat-usage-chunk-without-choices.sse")
def _usage_without_choices(name: str) -> None:
    """Breaks openai-python and the AI SDK. docs/wire-contract.md#openai-chat-completions:
    a final chunk of usage alone still needs `"choices": []`; without the key the AI SDK
    fails validation and openai-python raises a `TypeError`. openai-python streams the whole
    text first, then raises at the usage chunk, so ``get_final_completion()`` never returns."""
    events, raised = chat_events(sample_bytes(name))
    assert isinstance(raised, TypeError)
    assert str(raised) == "'NoneType' object is not iterable"
    streamed = "".join(e.delta for e in events if e.type == "content.delta")
    assert streamed == original_text(name)
    with pytest.raises(TypeError):
        sdk_clients.openai_chat(sample_bytes(name))


@passthrough("chat-single-newline.sse")
def _single_newline(name: str) -> None:
    """Breaks every spec-following SSE client. docs/wire-contract.md#transport-every-protocol:
    each frame ends with a blank line.
    A single line break does not end an SSE event, so the 34 `data:` lines become one
    event whose data is not JSON: openai-python raises ``json.JSONDecodeError`` ("Extra
    data") before yielding anything."""
    events, raised = chat_events(sample_bytes(name))
    assert events == []
    assert isinstance(raised, json.JSONDecodeError)
    assert raised.msg == "Extra data"


@passthrough("chat-missing-done.sse")
def _missing_done(name: str) -> None:
    """docs/wire-contract.md#openai-chat-completions: the last content chunk sets
    `finish_reason` and `data: [DONE]` follows. It records no client that breaks without
    `[DONE]`, and openai-python does not: it reads to the end of the body and assembles the same
    text, finish and usage as the original. (StreamScope's own proxy is stricter: see
    test_the_proxy_reports_a_stream_without_done.)"""
    assert outcome("openai-chat", sample_bytes(name)) == original(name)


@passthrough("chat-tool-call-without-name.sse")
def _tool_call_without_name(name: str) -> None:
    """Breaks the AI SDK, not openai-python. docs/wire-contract.md#openai-chat-completions:
    a tool call's first delta carries its `id`, `type` and `function.name`, and a
    new call that arrives without a name ends the AI SDK's whole stream.
    openai-python merges the name that arrives one delta later and assembles both calls."""
    assert outcome("openai-chat", sample_bytes(name)) == original(name)
    assert len(original(name)[1]["tool_calls"]) == 2


@passthrough("chat-non-sse-body.json")
def _non_sse_body(name: str) -> None:
    """Breaks openai-python. docs/wire-contract.md#transport-every-protocol:
    streams are sent as `Content-Type: text/event-stream`. A plain
    ``chat.completion`` body (200, application/json) to a stream request: ``create(stream=
    True)`` yields no chunk at all (a silent empty answer) and the stream helper's
    ``get_final_completion()`` raises AssertionError."""
    body = sample_bytes(name)
    messages: Any = [{"role": "user", "content": "hi"}]
    client = openai_client(body, "application/json")
    assert list(client.chat.completions.create(model="m", messages=messages, stream=True)) == []
    with client.chat.completions.stream(model="m", messages=messages) as stream:
        assert list(stream) == []
        with pytest.raises(AssertionError):
            stream.get_final_completion()


def test_every_broken_sample_has_a_passthrough_check() -> None:
    assert sorted(PASSTHROUGH) == sorted(BROKEN_NAMES)


@pytest.mark.parametrize("name", BROKEN_NAMES)
def test_passthrough_breaks_the_client_the_contract_names(name: str) -> None:
    PASSTHROUGH[name](name)


# -- repair: decode with our codec, encode again in the same protocol ------------------------

# The finding our decoder raises for each defect (None: it does not notice this one).
FINDINGS = {
    "responses-no-item-id.sse": "missing-item-id",
    "responses-no-sequence-number.sse": "missing-sequence-number",
    "responses-no-in-progress.sse": None,
    "responses-no-annotations.sse": None,
    "anthropic-no-event-lines.sse": "missing-event-line",
    "chat-usage-chunk-without-choices.sse": "missing-choices",
    "chat-single-newline.sse": "frames-joined-by-single-newline",
    "chat-missing-done.sse": "missing-terminator",
    "chat-tool-call-without-name.sse": "tool-call-missing-name",
}


def _payloads(frames: list[Frame]) -> list[Any]:
    return [json.loads(f.data or "") for f in frames if f.data not in (None, "[DONE]")]


def _output_text_parts(payload: dict[str, Any]) -> list[dict[str, Any]]:
    parts = [payload["part"]] if "part" in payload else []
    items = [payload["item"]] if "item" in payload else []
    items += (payload.get("response") or {}).get("output") or []
    parts += [c for item in items for c in item.get("content") or []]
    return [p for p in parts if p["type"] == "output_text"]


def rule_is_kept(name: str, frames: list[Frame]) -> None:
    """The repaired stream keeps the very rule the sample broke."""
    payloads = _payloads(frames)
    if name == "responses-no-item-id.sse":
        deltas = [p for p in payloads if p["type"] == "response.output_text.delta"]
        added = [p["item"]["id"] for p in payloads if p["type"] == "response.output_item.added"]
        assert deltas and all(p["item_id"] == added[0] for p in deltas)
    elif name == "responses-no-sequence-number.sse":
        assert [p["sequence_number"] for p in payloads] == list(range(len(payloads)))
    elif name == "responses-no-in-progress.sse":
        assert [p["type"] for p in payloads[:2]] == ["response.created", "response.in_progress"]
    elif name == "responses-no-annotations.sse":
        parts = [part for p in payloads for part in _output_text_parts(p)]
        assert len(parts) == 4 and all(part["annotations"] == [] for part in parts)
    elif name == "anthropic-no-event-lines.sse":
        assert all(event == kind for event, kind in _typed(frames))
    elif name == "chat-usage-chunk-without-choices.sse":
        assert payloads[-1]["usage"] and payloads[-1]["choices"] == []
    elif name == "chat-missing-done.sse":
        assert frames[-1].data == "[DONE]"
    elif name == "chat-single-newline.sse":
        # One frame per chunk again: each raw frame ends with the blank line.
        assert len(frames) > 1 and all(f.raw.endswith(b"\n\n") for f in frames)
        assert frames[-1].data == "[DONE]"
    elif name == "chat-tool-call-without-name.sse":
        firsts = [
            call
            for p in payloads
            for c in p["choices"]
            for call in c["delta"].get("tool_calls") or []
            if "id" in call
        ]
        assert len(firsts) == 2 and all(call["function"]["name"] for call in firsts)
    else:
        raise AssertionError(f"no rule check for {name}")


REPAIRABLE = list(SSE_NAMES)


def repair(name: str) -> tuple[bytes, StreamPipeline]:
    rec = read_recording(sample_bytes(name), protocol_of(name))
    out, pipeline = translate_frames(rec.frames, rec.protocol, rec.protocol)
    return b"".join(out), pipeline


@pytest.mark.parametrize("name", REPAIRABLE)
def test_repair_assembles_what_the_source_recording_says(name: str) -> None:
    body, pipeline = repair(name)
    codes = {f.code for f in pipeline.decoder.findings}
    if FINDINGS[name] is not None:
        assert FINDINGS[name] in codes
    assert errors(pipeline.decoder.findings) == []
    rule_is_kept(name, decode_all(body))
    # Text, reasoning, tool calls, usage and finish: all as the undamaged source says
    # (for the error stream: the same APIError with the provider's message).
    assert outcome(protocol_of(name), body) == original(name)


def test_repair_reads_frames_sent_with_single_newlines_line_by_line() -> None:
    """Our SSE decoder follows the spec too: the stream is one frame whose data is the 34
    `data:` lines joined by newlines, not JSON. The codec then reads each line as the frame
    it was meant to be (every line is JSON or `[DONE]`), with a warning that names the
    defect, so repair gives the client the whole answer instead of an empty one."""
    name = "chat-single-newline.sse"
    rec = read_recording(sample_bytes(name), "openai-chat")
    assert len(rec.frames) == 1
    assert rec.frames[0].data is not None and len(rec.frames[0].data.split("\n")) == 34
    body, pipeline = repair(name)
    codes = [f.code for f in pipeline.decoder.findings]
    assert "frames-joined-by-single-newline" in codes and errors(pipeline.decoder.findings) == []
    assert outcome("openai-chat", body) == original(name)


def test_repair_re_emits_a_non_sse_body_as_a_stream() -> None:
    """The JSON body is no recording (``read_recording`` refuses it); the proxy's repair
    decodes it as a non-streaming ``chat.completion`` and streams it to the client. At the
    codec level: decode_response, then the events of that response through the stream
    encoder, gives the SDK the same text, finish and usage as the source stream."""
    name = "chat-non-sse-body.json"
    body = sample_bytes(name)
    with pytest.raises(RecordingError):
        read_recording(body)
    codec = get_codec("openai-chat")
    response = codec.decode_response(json.loads(body))
    encoder = codec.stream_encoder(EncodeOptions())
    out = [chunk for ev in to_events(response) for chunk in encoder.encode(ev)]
    stream = b"".join(out + encoder.finish())
    assert outcome("openai-chat", stream) == original(name)


# -- the proxy's pipeline: repair as it runs live ---------------------------------------------


def through_the_proxy(name: str, passthrough: bool) -> bytes:
    """The client bytes of StreamPipeline as the proxy builds it (``on_incomplete="error"``)."""
    pipeline = StreamPipeline(
        get_codec(protocol_of(name)), get_codec(protocol_of(name)), passthrough=passthrough
    )
    out: list[bytes] = []
    for frame in decode_all(sample_bytes(name)):
        out += pipeline.feed(frame)
    out += pipeline.finish()
    return b"".join(out)


@pytest.mark.parametrize("name", REPAIRABLE)
def test_the_proxy_repairs_like_translate(name: str) -> None:
    assert outcome(protocol_of(name), through_the_proxy(name, False)) == original(name)


def test_the_proxy_passes_a_finished_stream_without_done_through_unchanged() -> None:
    """Every choice has its finish_reason and the usage chunk arrived: the answer is
    whole, so passthrough adds nothing (the bytes are the upstream's, which openai-python
    assembles) and repair adds the missing `[DONE]`. A stream cut before its finish is
    still an ``upstream_incomplete`` error (tests/translation/test_pipeline.py)."""
    name = "chat-missing-done.sse"
    assert through_the_proxy(name, True) == sample_bytes(name)
    repaired = through_the_proxy(name, False)
    assert repaired.endswith(b"data: [DONE]\n\n") and b"upstream_incomplete" not in repaired
    assert outcome("openai-chat", repaired) == original(name)
