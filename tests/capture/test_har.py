"""The HAR export and import of flows (app/streamscope/capture/har.py): every export is a
valid HAR 1.2 log (checked against a JSON Schema written from the spec,
``har_schema.json``, and by a small validator here for what a schema cannot say: ``time``
is the sum of the timings, URLs are absolute), and ``to_har`` -> JSON text -> ``from_har``
gives back the flows exactly (every frame's bytes, time and sources); HAR files of browser
devtools import as one flow per entry.

The flows exported here and the validator serve the ``.sse`` tests (test_sse.py,
test_sse_replay.py) and others that need a HAR or a flow of every kind.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest

from streamscope.analysis.reading import LegReading
from streamscope.capture.flow import CapturedFrame, Flow, Leg, RequestRecord
from streamscope.capture.har import EXTENSION, HarError, from_har, to_har
from streamscope.capture.info import FlowInfo
from streamscope.capture.outcome import Outcome
from streamscope.model.request import RequestNote
from streamscope.pool.state import Attempt
from tests.support import FIXTURES, load

MS = 1_000_000
CHAT_SSE = FIXTURES / "openai-chat" / "oai-py_text_usage_done.sse"
CHAT_TOOL = FIXTURES / "openai-chat" / "oai-py_tool-call-single.sse"
ANTHROPIC_TOOL = FIXTURES / "anthropic" / "ant-py_text-then-tool-use.sse"
# as the API sent it: the SDK's fixture file trims the blank line after `message_stop`
# (tests/fixtures/SOURCES.md), which the API and a browser's HAR keep
ANTHROPIC_TOOL_SENT = ANTHROPIC_TOOL.read_bytes() + b"\n\n"
RESPONSES_TEXT = FIXTURES / "responses" / "vercel_openai-gpt41nano_text.jsonl"
JSON = dict[str, Any]


# -- HAR 1.2: the JSON Schema, and a structural validator ------------------------------------

HAR_SCHEMA = jsonschema.Draft202012Validator(
    json.loads((Path(__file__).parent / "har_schema.json").read_text())
)


def schema_problems(har: Any) -> list[str]:
    """Where ``har`` breaks the HAR 1.2 JSON Schema."""
    return [f"{e.json_path}: {e.message}" for e in HAR_SCHEMA.iter_errors(har)]


NUMBER = (int, float)
SPEC: dict[str, dict[str, tuple[type | tuple[type, ...], bool]]] = {
    # object -> field -> (type, required); other fields must start with "_"
    "log": {
        "version": (str, True),
        "creator": (dict, True),
        "browser": (dict, False),
        "pages": (list, False),
        "entries": (list, True),
        "comment": (str, False),
    },
    "creator": {"name": (str, True), "version": (str, True), "comment": (str, False)},
    "entry": {
        "pageref": (str, False),
        "startedDateTime": (str, True),
        "time": (NUMBER, True),
        "request": (dict, True),
        "response": (dict, True),
        "cache": (dict, True),
        "timings": (dict, True),
        "serverIPAddress": (str, False),
        "connection": (str, False),
        "comment": (str, False),
    },
    "request": {
        "method": (str, True),
        "url": (str, True),
        "httpVersion": (str, True),
        "cookies": (list, True),
        "headers": (list, True),
        "queryString": (list, True),
        "postData": (dict, False),
        "headersSize": (int, True),
        "bodySize": (int, True),
        "comment": (str, False),
    },
    "response": {
        "status": (int, True),
        "statusText": (str, True),
        "httpVersion": (str, True),
        "cookies": (list, True),
        "headers": (list, True),
        "content": (dict, True),
        "redirectURL": (str, True),
        "headersSize": (int, True),
        "bodySize": (int, True),
        "comment": (str, False),
    },
    "content": {
        "size": (int, True),
        "compression": (int, False),
        "mimeType": (str, True),
        "text": (str, False),
        "encoding": (str, False),
        "comment": (str, False),
    },
    "postData": {
        "mimeType": (str, True),
        "params": (list, False),
        "text": (str, False),
        "comment": (str, False),
    },
    "pair": {"name": (str, True), "value": (str, True), "comment": (str, False)},
    "timings": {
        "blocked": (NUMBER, False),
        "dns": (NUMBER, False),
        "connect": (NUMBER, False),
        "send": (NUMBER, True),
        "wait": (NUMBER, True),
        "receive": (NUMBER, True),
        "ssl": (NUMBER, False),
        "comment": (str, False),
    },
}


def _check(kind: str, obj: Any, where: str, problems: list[str]) -> None:
    if not isinstance(obj, dict):
        problems.append(f"{where}: not an object")
        return
    for name, (types, required) in SPEC[kind].items():
        if name not in obj:
            if required:
                problems.append(f"{where}.{name}: missing")
        elif isinstance(obj[name], bool) or not isinstance(obj[name], types):
            problems.append(f"{where}.{name}: {type(obj[name]).__name__} is not {types}")
    problems.extend(
        f"{where}.{k}: not in HAR 1.2 (custom fields start with _)"
        for k in obj
        if k not in SPEC[kind] and not k.startswith("_")
    )


def har_problems(har: Any) -> list[str]:
    """What makes ``har`` not a HAR 1.2 log (the schema's findings, then this
    validator's: required fields and types per the spec, and what the schema cannot say)."""
    problems = schema_problems(har)
    if not isinstance(har, dict) or not isinstance(har.get("log"), dict):
        return ["no log object"]
    log = har["log"]
    _check("log", log, "log", problems)
    _check("creator", log.get("creator"), "log.creator", problems)
    if log.get("version") != "1.2":
        problems.append("log.version is not 1.2")
    for i, entry in enumerate(log.get("entries") or []):
        where = f"entries[{i}]"
        _check("entry", entry, where, problems)
        if not isinstance(entry, dict):
            continue
        try:
            datetime.fromisoformat(entry.get("startedDateTime", ""))
        except (TypeError, ValueError):
            problems.append(f"{where}.startedDateTime: not ISO 8601")
        request, response = entry.get("request") or {}, entry.get("response") or {}
        _check("request", request, f"{where}.request", problems)
        _check("response", response, f"{where}.response", problems)
        url = urlsplit(str(request.get("url", "")))
        if not (url.scheme and url.netloc):
            problems.append(f"{where}.request.url: not absolute")
        for part, field in ((request, "headers"), (request, "queryString"), (response, "headers")):
            for j, pair in enumerate(part.get(field) or []):
                _check("pair", pair, f"{where}.{field}[{j}]", problems)
        if "postData" in request:
            _check("postData", request["postData"], f"{where}.request.postData", problems)
        _check("content", response.get("content"), f"{where}.response.content", problems)
        timings = entry.get("timings") or {}
        _check("timings", timings, f"{where}.timings", problems)
        for name in ("send", "wait", "receive"):
            if isinstance(timings.get(name), NUMBER) and timings[name] < 0:
                problems.append(f"{where}.timings.{name}: negative")
        for name in ("blocked", "dns", "connect", "ssl"):
            if isinstance(timings.get(name), NUMBER) and timings[name] < -1:
                problems.append(f"{where}.timings.{name}: below -1")
        spent = sum(
            v for k, v in timings.items() if k in SPEC["timings"] and k != "ssl" and v != -1
        )
        if isinstance(entry.get("time"), NUMBER) and abs(entry["time"] - spent) > 1e-6:
            problems.append(f"{where}.time: {entry['time']} is not the sum of timings {spent}")
    return problems


# -- flows to export --------------------------------------------------------------------------


def frames_of(path: Path, start_ms: float, step_ms: float) -> list[CapturedFrame]:
    return [
        CapturedFrame(f.raw, round((start_ms + i * step_ms) * MS))
        for i, f in enumerate(load(path).frames)
    ]


def translated_flow() -> Flow:
    """An Anthropic client served from an OpenAI Chat upstream, a keepalive in between."""
    upstream = Leg(
        "openai-chat",
        200,
        [("content-type", "text/event-stream"), ("x-request-id", "req_1")],
        sent_ns=2 * MS,
        headers_ns=40 * MS,
        frames=frames_of(CHAT_TOOL, 41, 3.5),
        ended_ns=120 * MS,
    )
    client_frames = frames_of(ANTHROPIC_TOOL, 41.2, 3.25)
    for i, frame in enumerate(client_frames):
        frame.sources = (min(i, len(upstream.frames) - 1),)
    client_frames.insert(0, CapturedFrame(b": keepalive\n\n", 20 * MS))
    client = Leg(
        "anthropic",
        200,
        [("content-type", "text/event-stream"), ("x-request-id", "f-1")],
        headers_ns=MS + 17,
        frames=client_frames,
        ended_ns=130 * MS + 1,
    )
    body = json.dumps({"model": "claude-x", "stream": True, "max_tokens": 9}).encode()
    return Flow(
        id="f-1",
        started=1_715_000_000.123456,
        started_ns=987654321,
        client_protocol="anthropic",
        info=FlowInfo(
            model="claude-x",
            upstream="up",
            account="main",
            mode="repair",
            outcome=Outcome.COMPLETE,
            attempts=[
                Attempt("r", "up", "other", "rate-limited", "next", 429, 1_715_000_000.2),
                Attempt("r", "up", "main", "ok", "use", 200, 1_715_000_000.3),
            ],
            request_notes=[
                RequestNote(
                    "tools[0]", "dropped", "a server tool: OpenAI Chat has no place for it"
                ),
                RequestNote("thinking", "changed", "adaptive thinking", "reasoning_effort: medium"),
            ],
        ),
        request=RequestRecord(
            "POST",
            "/v1/messages?beta=true&x=1",
            [
                ("host", "127.0.0.1:8787"),
                ("x-api-key", "…abcd"),
                ("content-type", "application/json"),
            ],
            body,
        ),
        upstream_request=RequestRecord(
            "POST",
            "https://api.example.com/v1/chat/completions",
            [("authorization", "Bearer …wxyz")],
            b'{"model": "gpt-x", "stream": true}',
        ),
        upstream_leg=upstream,
        client_leg=client,
        duration_ns=130 * MS + 1,
    )


def body_flow() -> Flow:
    """An upstream that answered a stream request with a whole JSON body."""
    answer = b'{"id":"x","object":"chat.completion","choices":[],"usage":null}'
    upstream = Leg("openai-chat", 200, [("content-type", "application/json")], body=answer)
    upstream.sent_ns, upstream.headers_ns, upstream.ended_ns = 5, 9 * MS, 10 * MS
    client = Leg("openai-chat", 502, [("content-type", "application/json")], body=b'{"e":1}')
    client.headers_ns, client.ended_ns = 11 * MS, 11 * MS
    return Flow(
        id="f-2",
        started=1_715_000_001.5,
        started_ns=0,
        client_protocol="openai-chat",
        info=FlowInfo(
            outcome=Outcome.COMPLETE,
            outcome_detail="the upstream sent a whole body for a stream request",
        ),
        request=RequestRecord("POST", "/v1/chat/completions", [], b"{}"),
        upstream_request=RequestRecord("POST", "http://up/v1/chat/completions", [], b"{}"),
        upstream_leg=upstream,
        client_leg=client,
    )


def local_flow() -> Flow:
    """Refused by the proxy itself: no upstream exchange at all."""
    client = Leg("openai-chat", 401, [("content-type", "application/json")], body=b"{}")
    info = FlowInfo(outcome=Outcome.ERROR_ANSWER)
    return Flow(id="f-3", started=0.0, started_ns=0, info=info, client_leg=client)


def binary_flow() -> Flow:
    """Bytes that are not UTF-8, in a stream and in a request body."""
    frames = [CapturedFrame(b"data: caf\xe9\n\n", 3), CapturedFrame(b"data: \xff\xfe\x00\n\n", 4)]
    leg = Leg("", 200, [("content-type", "text/event-stream")], frames=frames, truncated=True)
    request = RequestRecord("POST", "http://h/x", [], b"\x80\x81 not utf-8")
    return Flow(
        id="f-4",
        started=2.0,
        started_ns=0,
        request=request,
        upstream_request=RequestRecord("POST", "http://u/x", [], b"\xc3"),
        upstream_leg=leg,
        client_leg=Leg("", 200, [], frames=[CapturedFrame(b"\xf0\x9f\x98\n\n", 9)]),
    )


def all_flows() -> list[Flow]:
    return [translated_flow(), body_flow(), local_flow(), binary_flow()]


def _round_trip(flows: list[Flow]) -> list[Flow]:
    return from_har(json.loads(json.dumps(to_har(flows))))


def _json(flows: list[Flow]) -> list[JSON]:
    return [json.loads(json.dumps(f.to_json())) for f in flows]


# -- HAR ---------------------------------------------------------------------------------------


def test_the_export_is_a_valid_har_1_2_log() -> None:
    har = to_har(all_flows())
    assert har_problems(har) == []
    assert har_problems(json.loads(json.dumps(har))) == []
    log = har["log"]
    assert log["creator"]["name"] == "StreamScope"
    legs = [(e[EXTENSION]["flow_id"], e[EXTENSION]["leg"]) for e in log["entries"]]
    assert legs == [
        ("f-1", "client"),
        ("f-1", "upstream"),
        ("f-2", "client"),
        ("f-2", "upstream"),
        ("f-3", "client"),  # never reached an upstream
        ("f-4", "client"),
        ("f-4", "upstream"),
    ]


def test_the_validator_finds_what_is_missing() -> None:
    har = to_har([translated_flow()])
    entry = har["log"]["entries"][0]
    del entry["response"]["content"]["mimeType"]
    entry["timings"]["wait"] = -1
    entry["request"]["url"] = "/v1/messages"
    entry["request"]["headers"].append({"name": "x"})
    entry["cache"] = None
    entry["nonsense"] = 1
    problems = "\n".join(har_problems(har))
    for needle in (
        "content.mimeType: missing",
        "timings.wait: negative",
        "url: not absolute",
        "headers[3].value: missing",
        "cache: NoneType",
        "nonsense: not in HAR 1.2",
        "time:",
    ):
        assert needle in problems


def test_the_schema_is_a_schema_and_finds_what_is_missing() -> None:
    jsonschema.Draft202012Validator.check_schema(HAR_SCHEMA.schema)
    good = json.loads(json.dumps(to_har(all_flows())))
    assert schema_problems(good) == []
    for path, change, needle in [
        (("response", "content"), lambda d: d.pop("mimeType"), "'mimeType' is a required"),
        (("timings",), lambda d: d.update(wait=-1), "-1 is less than the minimum of 0"),
        (("timings",), lambda d: d.update(dns=-2), "-2 is less than the minimum of -1"),
        (("request",), lambda d: d.update(url="/v1/messages"), "does not match"),
        (("request",), lambda d: d["headers"].append({"name": "x"}), "'value' is a required"),
        ((), lambda d: d.update(cache=None), "None is not of type 'object'"),
        ((), lambda d: d.update(nonsense=1), "'nonsense' does not match any of the regexes: '^_'"),
        ((), lambda d: d.update(startedDateTime="yesterday"), "does not match"),
        (("response",), lambda d: d.update(status="200"), "'200' is not of type 'integer'"),
        ((), lambda d: d.pop("timings"), "'timings' is a required"),
    ]:
        har = json.loads(json.dumps(good))
        target = har["log"]["entries"][0]
        for key in path:
            target = target[key]
        change(target)
        problems = "\n".join(schema_problems(har))
        assert needle in problems, (path, needle, problems)
    assert schema_problems({"log": {"version": "1.2", "entries": []}}) == [
        "$.log: 'creator' is a required property"
    ]


def test_a_client_entry_says_what_the_client_saw() -> None:
    flow = translated_flow()
    client, upstream = to_har([flow])["log"]["entries"]
    request, response = client["request"], client["response"]
    assert request["url"] == "http://127.0.0.1:8787/v1/messages?beta=true&x=1"
    assert request["queryString"] == [
        {"name": "beta", "value": "true"},
        {"name": "x", "value": "1"},
    ]
    assert request["postData"] == {
        "mimeType": "application/json",
        "text": flow.request.body.decode(),
    }
    assert request["bodySize"] == len(flow.request.body)
    assert (response["status"], response["statusText"]) == (200, "OK")
    assert response["content"]["text"].encode() == flow.client_leg.raw()
    assert response["content"]["size"] == len(flow.client_leg.raw())
    assert response["content"]["mimeType"] == "text/event-stream"
    assert client["timings"] == {
        "send": 0.0,
        "wait": (MS + 17) / 1e6,
        "receive": (129 * MS - 16) / 1e6,
    }
    assert client["startedDateTime"] == "2024-05-06T12:53:20.123+00:00"
    ext = client[EXTENSION]
    assert (ext["protocol"], ext["flow"]["model"], ext["attempts"][0]["status"]) == (
        "anthropic",
        "claude-x",
        429,
    )
    assert [f["size"] for f in ext["frames"]] == [len(f.raw) for f in flow.client_leg.frames]
    assert ext["frames"][0] == {"t_ns": 20 * MS, "t_ms": 20.0, "size": 13, "sources": []}
    assert ext["request_notes"] == [note.to_json() for note in flow.info.request_notes]
    assert "request_notes" not in upstream[EXTENSION]  # the flow's, said once
    # The upstream exchange starts when its request went out.
    assert upstream["request"]["url"] == "https://api.example.com/v1/chat/completions"
    assert upstream["timings"] == {"send": 0.0, "wait": 38.0, "receive": 80.0}
    assert upstream["time"] == 118.0
    assert upstream["startedDateTime"] == "2024-05-06T12:53:20.125+00:00"
    assert upstream[EXTENSION]["protocol"] == "openai-chat"


def test_bytes_that_are_not_utf8_are_base64() -> None:
    client, upstream = to_har([binary_flow()])["log"]["entries"]
    content = upstream["response"]["content"]
    assert content["encoding"] == "base64"
    assert base64.b64decode(content["text"]) == binary_flow().upstream_leg.raw()
    assert base64.b64decode(client["request"]["postData"]["text"]) == b"\x80\x81 not utf-8"
    assert client["request"]["postData"]["_encoding"] == "base64"


def test_har_round_trip_is_exact() -> None:
    flows = all_flows()
    back = _round_trip(flows)
    assert _json(back) == _json(flows)
    # frames one by one, to be explicit about what "exact" means
    for before, after in zip(flows, back, strict=True):
        for leg in ("upstream_leg", "client_leg"):
            a, b = getattr(before, leg), getattr(after, leg)
            assert [(f.raw, f.t_ns, f.sources) for f in a.frames] == [
                (f.raw, f.t_ns, f.sources) for f in b.frames
            ]
    assert back[2].upstream_request is None and back[0].started == flows[0].started


def test_timing_is_the_same_after_a_round_trip() -> None:
    flow = translated_flow()
    (back,) = _round_trip([flow])
    assert LegReading(back.client_leg).timing == LegReading(flow.client_leg).timing
    assert LegReading(back.upstream_leg).timing == LegReading(flow.upstream_leg).timing


def test_an_edited_text_is_read_as_it_is_now() -> None:
    har = json.loads(json.dumps(to_har([translated_flow()])))
    content = har["log"]["entries"][1]["response"]["content"]
    content["text"] = content["text"].replace("\n\n", "\r\n\r\n")  # a tool rewrote newlines
    (flow,) = from_har(har)
    assert flow.upstream_leg.raw() == content["text"].encode()
    assert all(f.t_ns == 40 * MS for f in flow.upstream_leg.frames)  # at the headers' time
    assert len(flow.upstream_leg.frames) == len(load(CHAT_TOOL).frames)


def test_an_upstream_entry_alone_still_imports() -> None:
    flow = translated_flow()
    har = json.loads(json.dumps(to_har([flow])))
    del har["log"]["entries"][0]  # the client entry, with the flow's metadata
    (back,) = from_har(har)
    assert back.id == "f-1" and back.client_leg.frames == [] and back.info.attempts == []
    assert [(f.raw, f.t_ns) for f in back.upstream_leg.frames] == [
        (f.raw, f.t_ns) for f in flow.upstream_leg.frames
    ]
    assert back.started == pytest.approx(flow.started + 0.002, abs=1e-3)


def test_request_notes_of_the_wrong_shape_import_as_none() -> None:
    har = json.loads(json.dumps(to_har([translated_flow()])))
    har["log"]["entries"][0][EXTENSION]["request_notes"] = [{"field": "x"}, 7, None]
    assert from_har(har)[0].info.request_notes == []
    har["log"]["entries"][0][EXTENSION]["request_notes"] = "not a list"
    assert from_har(har)[0].info.request_notes == []


def test_odd_foreign_entries_import_as_empty_flows() -> None:
    entries = [{"request": "x", "response": None}, {"response": {"content": [], "headers": 1}}]
    flows = from_har({"log": {"entries": entries}})
    assert [(f.upstream_leg.raw(), f.request.url, f.started) for f in flows] == [(b"", "", 0.0)] * 2


@pytest.mark.parametrize("bad", [[], {}, {"log": {}}, {"log": {"entries": [1]}}])
def test_not_a_har(bad: Any) -> None:
    with pytest.raises(HarError):
        from_har(bad)


def devtools_har() -> JSON:
    """A HAR as Chrome's devtools save it (plus a Firefox-style base64 body): an
    OpenAI Chat stream called from a web page, the models list, an Anthropic stream."""
    chat = CHAT_SSE.read_bytes().decode()
    anthropic = ANTHROPIC_TOOL_SENT
    chat_request = {"model": "gpt-4o-mini", "stream": True, "messages": []}
    return {
        "log": {
            "version": "1.2",
            "creator": {"name": "WebInspector", "version": "537.36"},
            "pages": [
                {
                    "startedDateTime": "2025-03-14T09:26:50.000Z",
                    "id": "page_1",
                    "title": "http://localhost:5173/",
                    "pageTimings": {"onContentLoad": 120.5, "onLoad": 200.1},
                }
            ],
            "entries": [
                {
                    "_initiator": {"type": "script"},
                    "_priority": "High",
                    "_resourceType": "fetch",
                    "cache": {},
                    "connection": "443",
                    "pageref": "page_1",
                    "request": {
                        "method": "POST",
                        "url": "https://api.openai.com/v1/chat/completions",
                        "httpVersion": "http/2.0",
                        "headers": [
                            {"name": ":authority", "value": "api.openai.com"},
                            {"name": "authorization", "value": "Bearer sk-proj-…"},
                            {"name": "content-type", "value": "application/json"},
                        ],
                        "queryString": [],
                        "cookies": [],
                        "headersSize": -1,
                        "bodySize": 60,
                        "postData": {
                            "mimeType": "application/json",
                            "text": json.dumps(chat_request),
                        },
                    },
                    "response": {
                        "status": 200,
                        "statusText": "",
                        "httpVersion": "http/2.0",
                        "headers": [
                            {"name": "content-type", "value": "text/event-stream; charset=utf-8"},
                            {"name": "openai-processing-ms", "value": "290"},
                        ],
                        "cookies": [],
                        "content": {
                            "size": len(chat),
                            "mimeType": "text/event-stream",
                            "text": chat,
                        },
                        "redirectURL": "",
                        "headersSize": -1,
                        "bodySize": -1,
                        "_transferSize": 5123,
                        "_error": None,
                    },
                    "serverIPAddress": "104.18.7.192",
                    "startedDateTime": "2025-03-14T09:26:53.412Z",
                    "time": 812.5,
                    "timings": {
                        "blocked": 1.2,
                        "dns": -1,
                        "ssl": -1,
                        "connect": -1,
                        "send": 0.3,
                        "wait": 310.0,
                        "receive": 501.0,
                        "_blocked_queueing": 0.9,
                    },
                },
                {
                    "cache": {},
                    "request": {
                        "method": "GET",
                        "url": "https://api.openai.com/v1/models?limit=2",
                        "httpVersion": "http/2.0",
                        "headers": [],
                        "queryString": [{"name": "limit", "value": "2"}],
                        "cookies": [],
                        "headersSize": -1,
                        "bodySize": 0,
                    },
                    "response": {
                        "status": 200,
                        "statusText": "OK",
                        "httpVersion": "http/2.0",
                        "headers": [{"name": "content-type", "value": "application/json"}],
                        "cookies": [],
                        "content": {
                            "size": 27,
                            "mimeType": "application/json",
                            "text": '{"object":"list","data":[]}',
                        },
                        "redirectURL": "",
                        "headersSize": -1,
                        "bodySize": 27,
                    },
                    "startedDateTime": "2025-03-14T09:26:54.000+00:00",
                    "time": 20.0,
                    "timings": {"send": 1.0, "wait": 15.0, "receive": 4.0},
                },
                {
                    "cache": {},
                    "request": {
                        "method": "POST",
                        "url": "https://api.anthropic.com/v1/messages",
                        "httpVersion": "HTTP/1.1",
                        "headers": [],
                        "queryString": [],
                        "cookies": [],
                        "headersSize": 200,
                        "bodySize": 0,
                    },
                    "response": {
                        "status": 200,
                        "statusText": "OK",
                        "httpVersion": "HTTP/1.1",
                        "headers": [{"name": "Content-Type", "value": "text/event-stream"}],
                        "cookies": [],
                        "content": {
                            "size": len(anthropic),
                            "mimeType": "text/event-stream",
                            "encoding": "base64",
                            "text": base64.b64encode(anthropic).decode(),
                        },
                        "redirectURL": "",
                        "headersSize": 150,
                        "bodySize": len(anthropic),
                    },
                    "startedDateTime": "2025-03-14T10:26:55.000+01:00",
                    "time": 30.0,
                    "timings": {
                        "blocked": -1,
                        "dns": 0,
                        "connect": 5,
                        "send": 0,
                        "wait": 20,
                        "receive": 5,
                    },
                },
            ],
        }
    }


def test_the_devtools_har_is_valid_for_the_validator() -> None:
    assert har_problems(devtools_har()) == []


def test_a_devtools_har_imports_one_flow_per_entry() -> None:
    chat, models, claude = from_har(devtools_har())
    # The stream: its frames as the SSE decoder reads them, all at the headers' time.
    rec = load(CHAT_SSE)
    leg = chat.upstream_leg
    assert [f.raw for f in leg.frames] == [f.raw for f in rec.frames]
    assert leg.raw() == CHAT_SSE.read_bytes()
    headers_ns = round((1.2 + 0.3 + 310.0) * MS)
    assert {f.t_ns for f in leg.frames} == {headers_ns}
    assert (leg.sent_ns, leg.headers_ns, leg.ended_ns) == (1_200_000, headers_ns, 812_500_000)
    assert (leg.protocol, leg.status, leg.streamed) == ("openai-chat", 200, True)
    assert chat.client_leg.raw() == leg.raw() and chat.client_leg is not leg
    assert chat.client_leg.frames[0] is not leg.frames[0]
    assert chat.started == datetime(2025, 3, 14, 9, 26, 53, 412000, tzinfo=UTC).timestamp()
    assert (chat.info.model, chat.client_protocol, chat.info.outcome, chat.info.imported) == (
        "gpt-4o-mini",
        "openai-chat",
        None,
        True,
    )
    assert chat.request.url == "https://api.openai.com/v1/chat/completions"
    assert ("authorization", "Bearer sk-proj-…") in chat.request.headers
    assert json.loads(chat.request.body)["model"] == "gpt-4o-mini"
    assert chat.upstream_request is not None and chat.upstream_request.url == chat.request.url
    timing = LegReading(chat.upstream_leg).timing
    assert timing.first_content_ms == 311.5 and timing.output_tokens == 30
    # A JSON answer is a whole body.
    assert (models.upstream_leg.body, models.upstream_leg.streamed) == (
        b'{"object":"list","data":[]}',
        False,
    )
    assert models.request.method == "GET" and models.request.body == b""
    assert models.upstream_leg.headers_ns == 16 * MS and models.duration_ns == 20 * MS
    # A base64 body is decoded; -1 times count as nothing.
    assert claude.upstream_leg.raw() == ANTHROPIC_TOOL_SENT
    assert claude.upstream_leg.protocol == "anthropic"
    assert claude.upstream_leg.headers_ns == 25 * MS and claude.upstream_leg.sent_ns == 5 * MS
    assert claude.started == chat.started + 1.588
    assert len({chat.id, models.id, claude.id}) == 3


def test_a_devtools_import_exports_to_a_valid_har_again() -> None:
    flows = from_har(devtools_har())
    har = to_har(flows)
    assert har_problems(har) == []
    assert _json(_round_trip(flows)) == _json(flows)
