"""HAR 1.2 export and import of flows (http://www.softwareishard.com/blog/har-12-spec/).

Export (``to_har``): each flow gives two entries, in this order:

- the *client* entry: ``request`` is the client's request, ``response`` the client leg
  (what the proxy sent back);
- the *upstream* entry: ``request`` is what the proxy sent upstream, ``response`` the
  upstream leg (left out when the flow never reached an upstream: no upstream request
  and an empty upstream leg).

``response.content.text`` is the leg's whole body: the streamed bytes joined, or the
whole body. It is UTF-8 text, or base64 with ``"encoding": "base64"`` when the bytes are
not valid UTF-8 (nothing is ever replaced). ``timings`` are ``send`` 0 (unknown),
``wait`` up to the response headers and ``receive`` from there to the leg's end;
``time`` is their sum. Relative URLs (the proxy's own paths) are made absolute with the
``Host`` header, as HAR requires.

What HAR has no field for is in a custom field (HAR allows names starting with ``_``)::

    entry["_streamscope"] = {
        "version": 1,
        "flow_id": "…", "leg": "client" | "upstream", "protocol": "anthropic",
        "url": "/v1/messages",          # the request URL exactly as recorded
        "status": 200 | None,           # the leg's status (response.status 0 = none)
        "sent_ns": …, "headers_ns": …, "ended_ns": …,   # ns since the flow started
        "truncated": false,
        "body": false,                  # true: a whole body, not a stream
        "frames": [{"t_ns": 1200000, "t_ms": 1.2, "size": 97, "sources": [0]}, …],
        "request_recorded": true,       # upstream entry only; false: no upstream request
        "flow": {"started": 1715000000.123, "client_protocol": …, "model": …, "upstream": …,
                 "account": …, "mode": …, "outcome": …, "outcome_detail": …, "capture_note": …,
                 "duration_ns": …, "imported": …},  # client entry only
        "attempts": [...],              # client entry only
        "request_notes": [{"field": …, "action": "dropped" | "changed", "why": …,
                           "instead": … | None}, …],  # client entry only: what
                                        # translating the request changed or dropped
    }

A frame's bytes are the next ``size`` bytes of ``content.text``: ``from_har`` rebuilds
our files' flows exactly.

Import (``from_har``) also reads HAR files of other tools (browser devtools): each entry
without ``_streamscope`` becomes a flow of its own, its request both the client's and the
upstream's and its response both legs (the request and answer as one side saw them). A
``text/event-stream`` body is split into frames with the SSE decoder; the file has no
per-frame times, so every frame is at the time the response headers came (the entry's
``blocked`` + ``dns`` + ``connect`` + ``send`` + ``wait``, ``-1`` counting as 0). Other
bodies are whole-body legs. Protocols are recognised from the frames or the body.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import http
import json
import uuid
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from streamscope import __version__
from streamscope.capture.flow import CapturedFrame, Flow, Headers, Leg, RequestRecord
from streamscope.capture.info import FlowInfo
from streamscope.capture.sse import SSE_TYPE, body_protocol, copy_leg, frames_protocol
from streamscope.wire import FrameTooLarge, decode_all
from streamscope.wire.frame import Frame

JSON = dict[str, Any]
EXTENSION = "_streamscope"
EXTENSION_VERSION = 1
HTTP_VERSION = "HTTP/1.1"
_FLOW_FIELDS = (
    "started",
    "client_protocol",
    "model",
    "account",
    "mode",
    "outcome",
    "outcome_detail",
    "capture_note",
    "duration_ns",
    "imported",  # (a flow read from a file names no outcome of ours: this says why)
    "upstream",
)
_LEG_FIELDS = ("status", "sent_ns", "headers_ns", "ended_ns", "truncated")


class HarError(ValueError):
    """The data is not a HAR log."""


# -- export -------------------------------------------------------------------------------


def to_har(flows: list[Flow]) -> JSON:
    """A HAR 1.2 log of ``flows`` (a plain dict, ready for ``json.dumps``)."""
    entries: list[JSON] = []
    for flow in flows:
        entries.append(_entry(flow, "client"))
        if flow.upstream_request is not None or not _empty(flow.upstream_leg):
            entries.append(_entry(flow, "upstream"))
    creator = {"name": "StreamScope", "version": __version__}
    return {"log": {"version": "1.2", "creator": creator, "entries": entries}}


def _empty(leg: Leg) -> bool:
    return leg.status is None and not leg.frames and leg.body is None


def _ms(ns: int) -> float:
    return max(0, ns) / 1e6


def _entry(flow: Flow, which: str) -> JSON:
    client = which == "client"
    leg = flow.client_leg if client else flow.upstream_leg
    request = flow.request if client else (flow.upstream_request or RequestRecord())
    start = 0 if client else (leg.sent_ns or 0)
    end = leg.ended_ns
    if end is None:
        end = leg.frames[-1].t_ns if leg.frames else leg.headers_ns
    headers = leg.headers_ns if leg.headers_ns is not None else end
    wait = _ms(headers - start) if headers is not None else 0.0
    receive = _ms(end - headers) if end is not None and headers is not None else 0.0
    started = datetime.fromtimestamp(flow.started + start / 1e9, tz=UTC)
    ext: JSON = {
        "version": EXTENSION_VERSION,
        "flow_id": flow.id,
        "leg": which,
        "protocol": leg.protocol,
        "url": request.url,
        **{k: getattr(leg, k) for k in _LEG_FIELDS},
        "body": leg.body is not None,
        "frames": [
            {"t_ns": f.t_ns, "t_ms": f.t_ns / 1e6, "size": len(f.raw), "sources": list(f.sources)}
            for f in leg.frames
        ],
    }
    if client:
        # named as Flow.to_json names them, so that Flow.from_json reads them back
        info = flow.info.to_json()
        own = {k: getattr(flow, k) for k in ("started", "client_protocol", "duration_ns")}
        ext["flow"] = {k: own[k] if k in own else info[k] for k in _FLOW_FIELDS}
        ext["attempts"] = info["attempts"]
        ext["request_notes"] = info["request_notes"]
    else:
        ext["request_recorded"] = flow.upstream_request is not None
    return {
        "startedDateTime": started.isoformat(timespec="milliseconds"),
        "time": wait + receive,
        "request": _har_request(request),
        "response": _har_response(leg),
        "cache": {},
        "timings": {"send": 0.0, "wait": wait, "receive": receive},
        EXTENSION: ext,
    }


def _header(headers: Headers, name: str) -> str | None:
    return next((v for k, v in headers if k.lower() == name), None)


def _har_headers(headers: Headers) -> list[JSON]:
    return [{"name": k, "value": v} for k, v in headers]


def _text(data: bytes) -> tuple[str, str | None]:
    """HAR text for bytes: UTF-8 when it is, else base64 (and the encoding to say so)."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        return base64.b64encode(data).decode("ascii"), "base64"


def _absolute(url: str, headers: Headers) -> str:
    if urlsplit(url).scheme:
        return url
    host = _header(headers, "host") or _header(headers, ":authority") or "localhost"
    return f"http://{host}{url if url.startswith('/') else '/' + url}"


def _har_request(r: RequestRecord) -> JSON:
    url = _absolute(r.url, r.headers)
    out: JSON = {
        "method": r.method,
        "url": url,
        "httpVersion": HTTP_VERSION,
        "cookies": [],
        "headers": _har_headers(r.headers),
        "queryString": [{"name": k, "value": v} for k, v in parse_qsl(urlsplit(url).query, True)],
        "headersSize": -1,
        "bodySize": len(r.body),
    }
    if r.body:
        text, encoding = _text(r.body)
        mime = _header(r.headers, "content-type") or "application/json"
        out["postData"] = {"mimeType": mime, "text": text}
        if encoding:
            out["postData"]["_encoding"] = encoding  # postData has no standard field
    return out


def _har_response(leg: Leg) -> JSON:
    data = leg.raw()
    text, encoding = _text(data)
    default = SSE_TYPE if leg.streamed else "application/json"
    content: JSON = {
        "size": len(data),
        "mimeType": _header(leg.headers, "content-type") or default,
        "text": text,
    }
    if encoding:
        content["encoding"] = encoding
    status = leg.status or 0
    try:
        reason = http.HTTPStatus(status).phrase
    except ValueError:
        reason = ""
    return {
        "status": status,
        "statusText": reason,
        "httpVersion": HTTP_VERSION,
        "cookies": [],
        "headers": _har_headers(leg.headers),
        "content": content,
        "redirectURL": _header(leg.headers, "location") or "",
        "headersSize": -1,
        "bodySize": len(data),
    }


# -- import -------------------------------------------------------------------------------


def from_har(har: JSON) -> list[Flow]:
    """The flows of a HAR log: ours exactly, others' one flow per entry."""
    log = har.get("log") if isinstance(har, dict) else None
    entries = log.get("entries") if isinstance(log, dict) else None
    if not isinstance(entries, list):
        raise HarError("not a HAR file: no log.entries list")
    slots: list[Flow | str] = []  # a foreign entry's flow, or one of ours by id
    ours: dict[str, dict[str, tuple[JSON, JSON]]] = {}  # id -> leg name -> (entry, ext)
    for entry in entries:
        if not isinstance(entry, dict):
            raise HarError("a HAR entry is not an object")
        ext = entry.get(EXTENSION)
        if isinstance(ext, dict) and ext.get("flow_id") is not None:
            flow_id = str(ext["flow_id"])
            if flow_id not in ours:
                slots.append(flow_id)
            ours.setdefault(flow_id, {})[str(ext.get("leg"))] = (entry, ext)
        else:
            slots.append(_generic(entry))
    return [s if isinstance(s, Flow) else _our_flow(s, ours[s]) for s in slots]


def _started(entry: JSON) -> float:
    try:
        return datetime.fromisoformat(str(entry.get("startedDateTime"))).timestamp()
    except ValueError:
        return 0.0


def _our_flow(flow_id: str, legs: dict[str, tuple[JSON, JSON]]) -> Flow:
    """A flow of ours from its client and upstream entries (either may be missing)."""
    client = legs.get("client")
    meta = client[1].get("flow") if client else None
    meta = dict(meta) if isinstance(meta, dict) else {}
    if "started" not in meta:
        meta["started"] = _started(next(iter(legs.values()))[0])
    told = client[1] if client else {}  # the client entry's extension
    flow = Flow.from_json(
        {
            **meta,
            "id": flow_id,
            "attempts": told.get("attempts"),
            "request_notes": told.get("request_notes"),
        }
    )
    if client is not None:
        flow.request = _request(client[0].get("request"), client[1].get("url"))
        flow.client_leg = _our_leg(*client)
    upstream = legs.get("upstream")
    if upstream is not None:
        entry, ext = upstream
        if ext.get("request_recorded", True):
            flow.upstream_request = _request(entry.get("request"), ext.get("url"))
        flow.upstream_leg = _our_leg(entry, ext)
    return flow


def _pairs(items: Any) -> Headers:
    if not isinstance(items, list):
        return []
    return [(str(h.get("name", "")), str(h.get("value", ""))) for h in items if isinstance(h, dict)]


def _bytes(holder: JSON, encoding_key: str) -> bytes:
    text = holder.get("text")
    if not isinstance(text, str):
        return b""
    if holder.get(encoding_key) == "base64":
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise HarError("a base64 body is not valid base64") from None
    return text.encode("utf-8", errors="surrogatepass")


def _request(r: Any, url: Any = None) -> RequestRecord:
    r = r if isinstance(r, dict) else {}
    post = r.get("postData")
    body = _bytes(post, "_encoding") if isinstance(post, dict) else b""
    return RequestRecord(
        method=str(r.get("method") or "GET"),
        url=str(url) if isinstance(url, str) else str(r.get("url") or ""),
        headers=_pairs(r.get("headers")),
        body=body,
    )


def _content(entry: JSON) -> tuple[JSON, bytes]:
    response = entry.get("response")
    response = response if isinstance(response, dict) else {}
    content = response.get("content")
    content = content if isinstance(content, dict) else {}
    return response, _bytes(content, "encoding")


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _our_leg(entry: JSON, ext: JSON) -> Leg:
    response, data = _content(entry)
    leg = Leg(str(ext.get("protocol") or ""), headers=_pairs(response.get("headers")))
    for name in _LEG_FIELDS[:-1]:  # status and times
        setattr(leg, name, _int_or_none(ext.get(name)))
    leg.truncated = bool(ext.get("truncated"))
    if ext.get("body"):
        leg.body = data
        return leg
    listed = [f for f in ext.get("frames") or [] if isinstance(f, dict)]
    sizes = [_int_or_none(f.get("size")) for f in listed]
    if all(s is not None and s >= 0 for s in sizes) and sum(s or 0 for s in sizes) == len(data):
        pos = 0
        for f, size in zip(listed, sizes, strict=True):
            end = pos + (size or 0)
            sources = tuple(int(s) for s in f.get("sources") or ())
            leg.frames.append(
                CapturedFrame(data[pos:end], _int_or_none(f.get("t_ns")) or 0, sources)
            )
            pos = end
    else:  # the text was changed since: its frames as they read now, at the headers' time
        leg.frames = [CapturedFrame(f.raw, leg.headers_ns or 0) for f in _decode(data)]
    return leg


def _decode(data: bytes) -> list[Frame]:
    try:
        return decode_all(data)
    except FrameTooLarge:  # one chunk, then, rather than nothing
        return [Frame(raw=data, arrival_ns=0)] if data else []


def _number(timings: JSON, key: str) -> float:
    value = timings.get(key)
    return float(value) if isinstance(value, int | float) and value > 0 else 0.0


def _generic(entry: JSON) -> Flow:
    """A flow from an entry of another tool's HAR (see the module docstring)."""
    request = _request(entry.get("request"))
    response, data = _content(entry)
    timings = entry.get("timings")
    timings = timings if isinstance(timings, dict) else {}
    before = sum(_number(timings, k) for k in ("blocked", "dns", "connect"))
    headers_ms = before + _number(timings, "send") + _number(timings, "wait")
    headers_ns = round(headers_ms * 1e6)
    ended_ns = round((headers_ms + _number(timings, "receive")) * 1e6)
    headers = _pairs(response.get("headers"))
    content = response.get("content")
    mime = content.get("mimeType") if isinstance(content, dict) else None
    mime = str(mime or _header(headers, "content-type") or "")
    leg = Leg(
        status=_int_or_none(response.get("status")) or None,
        headers=headers,
        sent_ns=round(before * 1e6),
        headers_ns=headers_ns,
        ended_ns=ended_ns,
    )
    if SSE_TYPE in mime.lower():
        frames = _decode(data)
        leg.frames = [CapturedFrame(f.raw, headers_ns) for f in frames]
        leg.protocol = frames_protocol(frames)
    else:
        leg.body = data
        leg.protocol = body_protocol(data)
    return Flow(
        id=uuid.uuid4().hex,
        started=_started(entry),
        started_ns=0,
        client_protocol=leg.protocol,
        info=FlowInfo(model=_model(request.body), imported=True),
        request=request,
        upstream_request=dataclasses.replace(request, headers=list(request.headers)),
        upstream_leg=leg,
        client_leg=copy_leg(leg),
        duration_ns=ended_ns,
    )


def _model(body: bytes) -> str | None:
    try:
        data = json.loads(body) if body else None
    except ValueError:
        return None
    model = data.get("model") if isinstance(data, dict) else None
    return model if isinstance(model, str) else None


__all__ = ["EXTENSION", "HarError", "from_har", "to_har"]
