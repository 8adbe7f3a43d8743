"""A flow: one request through the proxy, both legs of its answer, as the wire carried it.

    Flow
      info           FlowInfo: what the proxy knows of it beyond its bytes — model,
                     route, account, mode, outcome, attempts (one per account tried),
                     what translating the request changed or dropped (masked)
      request        the client's request: method, path, headers (secrets masked), body
      upstream_request  what the proxy sent upstream: URL, headers (masked), body
      upstream_leg   Leg: the upstream's answer — status, headers, every frame's exact
                     bytes and arrival time (or a whole body)
      client_leg     Leg: what the client got — every frame as written and its send
                     time, each linked to the upstream frame(s) it came from

Times are nanoseconds since the flow started (``Flow.started_ns``, a monotonic clock),
so a flow's timings mean the same after storage and export. Decoded events are not
stored: they are a view, computed from the frames with the leg's protocol's codec.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from streamscope.capture.info import FlowInfo

JSON = dict[str, Any]
Headers = list[tuple[str, str]]


@dataclass(slots=True)
class CapturedFrame:
    raw: bytes  # the exact bytes (one SSE frame, or a comment such as ": keepalive")
    t_ns: int  # arrival (upstream leg) or send (client leg), ns since the flow started
    sources: tuple[int, ...] = ()  # client leg: upstream frame indexes


@dataclass(slots=True)
class Leg:
    """One response: a stream of frames, or a whole body."""

    protocol: str = ""
    status: int | None = None
    headers: Headers = field(default_factory=list)
    sent_ns: int | None = None  # the request for this leg went out (upstream leg)
    headers_ns: int | None = None  # response headers arrived / were sent
    frames: list[CapturedFrame] = field(default_factory=list)
    body: bytes | None = None  # a whole (non-SSE) body
    ended_ns: int | None = None
    truncated: bool = False  # frames beyond the capture's size limit were not kept

    @property
    def streamed(self) -> bool:
        return self.body is None

    def raw(self) -> bytes:
        """The leg's body bytes exactly as the wire carried them."""
        if self.body is not None:
            return self.body
        return b"".join(f.raw for f in self.frames)


@dataclass(slots=True)
class RequestRecord:
    method: str = "POST"
    url: str = ""
    headers: Headers = field(default_factory=list)
    body: bytes = b""


@dataclass(slots=True)
class Flow:
    id: str
    started: float  # wall clock (time.time())
    started_ns: int  # monotonic ns the offsets count from
    client_protocol: str = ""
    # What the proxy knows of it beyond its bytes: model, route, account, mode, outcome,
    # attempts, what the capture and the request's translation left out.
    info: FlowInfo = field(default_factory=FlowInfo)
    request: RequestRecord = field(default_factory=RequestRecord)
    upstream_request: RequestRecord | None = None
    upstream_leg: Leg = field(default_factory=Leg)
    client_leg: Leg = field(default_factory=Leg)
    duration_ns: int | None = None

    # -- JSON (storage, the admin API, import) --------------------------------------------

    def to_json(self) -> JSON:
        """The flow as stored and shown: its facts (:class:`FlowInfo`) flat among its own
        keys, as stored files and the admin API have always named them (the time to
        first token and token count are the flow's row's, not kept here)."""
        info = self.info
        return {
            "id": self.id,
            "started": self.started,
            "client_protocol": self.client_protocol,
            "model": info.model,
            "upstream": info.upstream,
            "account": info.account,
            "mode": info.mode,
            "outcome": info.outcome.value if info.outcome is not None else None,
            "outcome_detail": info.outcome_detail,
            "duration_ns": self.duration_ns,
            "imported": info.imported,
            "capture_note": info.capture_note,
            "request": _request_json(self.request),
            "upstream_request": (
                _request_json(self.upstream_request) if self.upstream_request else None
            ),
            "attempts": [a.to_json() for a in info.attempts],
            "request_notes": [note.to_json() for note in info.request_notes],
            # (the legs keep their stored names: the admin API's and older files' keys)
            "legs": {
                "upstream": _leg_json(self.upstream_leg),
                "client": _leg_json(self.client_leg),
            },
        }

    @classmethod
    def from_json(cls, data: JSON) -> Flow:
        """A flow read back from :meth:`to_json`'s keys (an older flow's too: its loose
        outcome string is read as an outcome and its detail)."""
        legs = data.get("legs") or {}
        upstream_request = data.get("upstream_request")
        return cls(
            id=str(data["id"]),
            started=float(data.get("started") or 0.0),
            started_ns=0,
            client_protocol=str(data.get("client_protocol") or ""),
            info=FlowInfo.from_json(data),
            duration_ns=data.get("duration_ns"),
            request=_request_from(data.get("request") or {}),
            upstream_request=_request_from(upstream_request) if upstream_request else None,
            upstream_leg=_leg_from(legs.get("upstream") or {}),
            client_leg=_leg_from(legs.get("client") or {}),
        )


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str | None) -> bytes:
    return base64.b64decode(text) if text else b""


def _request_json(r: RequestRecord) -> JSON:
    return {"method": r.method, "url": r.url, "headers": r.headers, "body_b64": _b64(r.body)}


def _request_from(d: JSON) -> RequestRecord:
    headers = [(str(k), str(v)) for k, v in d.get("headers") or []]
    return RequestRecord(
        str(d.get("method") or "POST"), str(d.get("url") or ""), headers, _unb64(d.get("body_b64"))
    )


def _leg_json(leg: Leg) -> JSON:
    return {
        "protocol": leg.protocol,
        "status": leg.status,
        "headers": leg.headers,
        "sent_ns": leg.sent_ns,
        "headers_ns": leg.headers_ns,
        "ended_ns": leg.ended_ns,
        "truncated": leg.truncated,
        "body_b64": _b64(leg.body) if leg.body is not None else None,
        "frames": [
            {"raw_b64": _b64(f.raw), "t_ns": f.t_ns, "sources": list(f.sources)} for f in leg.frames
        ],
    }


def _leg_from(d: JSON) -> Leg:
    body = d.get("body_b64")
    return Leg(
        protocol=str(d.get("protocol") or ""),
        status=d.get("status"),
        headers=[(str(k), str(v)) for k, v in d.get("headers") or []],
        sent_ns=d.get("sent_ns"),
        headers_ns=d.get("headers_ns"),
        ended_ns=d.get("ended_ns"),
        truncated=bool(d.get("truncated")),
        body=_unb64(body) if body is not None else None,
        frames=[
            CapturedFrame(
                _unb64(f.get("raw_b64")), int(f.get("t_ns") or 0), tuple(f.get("sources") or ())
            )
            for f in d.get("frames") or []
        ],
    )


__all__ = ["CapturedFrame", "Flow", "Headers", "Leg", "RequestRecord"]
