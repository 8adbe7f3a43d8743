"""The admin API under ``/admin``, guarded by ``[proxy] admin_keys`` when set, else by
the local keys; never for a web page (the app refuses those first).

    GET  /admin/pool                               every upstream and account (keys masked
                                                   to their last 4 characters), the
                                                   classification rules, recent attempts
    POST /admin/pool/{upstream}/{account}/enable   switch an account on (clears a cooldown)
    POST /admin/pool/{upstream}/{account}/disable  switch it off until enabled again
    GET  /admin/flows?offset=0&limit=100           flow summaries, newest first;
         [&outcome=upstream-error,upstream-cut]    only flows with those outcomes
    GET  /admin/flows.har?ids=ID,ID,…              those flows as one HAR 1.2 log (in that
                                                   order); without ids, the flows of the
                                                   page ?offset=0&limit=100 (at most 1000)
    POST /admin/flows/import[?protocol=P]          store the flows of the body: a HAR file,
                                                   or a raw .sse / .jsonl / .json recording
                                                   (Content-Type text/event-stream forces
                                                   a stream, else HAR is recognised by its
                                                   "log"); they are listed as ``imported``
    GET  /admin/flows/{id}                         a flow: both legs, frames, events
    GET  /admin/flows/{id}/summary                 its summary (as the list has it), linted
    GET  /admin/flows/{id}.har                     the flow as HAR 1.2
    GET  /admin/flows/{id}/{leg}.sse               a leg's raw bytes (leg: client, upstream)
    GET  /admin/flows/{id}/{leg}.sse.timing        its frames' arrival times (a replay sidecar)
    DELETE /admin/flows                            forget every flow
    GET  /admin/refusals?limit=100                 requests refused before they became
                                                   flows: counts by reason, the latest
    DELETE /admin/refusals                         reset those counts and the list
    GET  /admin/events                             the live feed (SSE): flows added,
                                                   updated, deleted; pool changes;
                                                   resumes after Last-Event-ID (feed.py)

Errors use the OpenAI envelope, like every endpoint that is not a client protocol's.
"""

from __future__ import annotations

import asyncio
import json
from urllib.parse import parse_qs

from streamscope.analysis.view import flow_view
from streamscope.capture.flow import Flow
from streamscope.capture.har import to_har
from streamscope.capture.imports import UnreadableImport, read_flows
from streamscope.capture.outcome import Outcome
from streamscope.capture.sse import export_sse, export_timing
from streamscope.capture.store import FlowStore
from streamscope.codecs import PROTOCOLS
from streamscope.model import errors
from streamscope.model.errors import ProxyError
from streamscope.proxy.asgi import Receive, Scope, Send, header, receive_body, send_bytes, send_json
from streamscope.proxy.core import Core
from streamscope.storage.errors import StorageError

IMPORT_LIMIT = 256 * 1024 * 1024  # bytes of a file to import, at most
MAX_SELECTION = 1000  # flows in one HAR export, at most


def _method(method: str, allowed: str, path: str) -> None:
    if method != allowed:
        raise ProxyError(405, f"{method} is not allowed on {path}", "invalid_request_error")


async def handle_admin(core: Core, scope: Scope, receive: Receive, send: Send) -> None:
    pool, flows, refusals = core.pool, core.flows, core.refusals
    method, path = scope["method"], scope["path"]
    if path.rstrip("/") == "/admin/events":
        _method(method, "GET", path)
        await core.feed.stream(header(scope, b"last-event-id"), receive, send)
        return
    if path.rstrip("/") == "/admin/refusals":
        if method == "DELETE":
            refusals.clear()
            await send_json(send, 200, {"deleted": True})
            return
        _method(method, "GET", path)
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        await send_json(send, 200, refusals.snapshot(_int(query, "limit", 100, 1000)))
        return
    if path in ("/admin/flows", "/admin/flows.har") or path.startswith("/admin/flows/"):
        if flows is None:
            raise errors.not_found("capture is off ([capture] enabled = false)", "capture_off")
        try:
            await _flows(flows, scope, receive, send)
        except StorageError as exc:  # the shared database is away: say so, briefly
            raise ProxyError(
                503,
                f"the flow store cannot be read now ({exc}); requests are still served and"
                " their flows kept until it is back",
                "api_error",
                "storage_unavailable",
                headers=[(b"retry-after", b"2")],
            ) from None
        return
    parts = path.strip("/").split("/")  # ["admin", "pool", upstream, account, action]
    if parts == ["admin", "pool"]:
        _method(method, "GET", path)
        await send_json(send, 200, pool.snapshot().to_json())
        return
    if len(parts) == 5 and parts[:2] == ["admin", "pool"] and parts[4] in ("enable", "disable"):
        _method(method, "POST", path)
        upstream, account, action = parts[2], parts[3], parts[4]
        if pool.upstream_config(upstream) is None:
            raise errors.not_found(f"no upstream {upstream!r}", "upstream_not_found")
        try:
            state = (
                pool.enable(upstream, account)
                if action == "enable"
                else pool.disable(upstream, account)
            )
        except KeyError:
            raise errors.not_found(
                f"upstream {upstream!r} has no account {account!r}", "account_not_found"
            ) from None
        await send_json(send, 200, {"upstream": upstream, "account": account, **state.to_json()})
        return
    raise errors.not_found(f"no endpoint {path}")


def _int(query: dict[str, list[str]], name: str, default: int, top: int) -> int:
    try:
        return max(0, min(int(query.get(name, [str(default)])[0]), top))
    except ValueError:
        raise errors.bad_request(f"{name} must be an integer", name) from None


async def _flows(flows: FlowStore, scope: Scope, receive: Receive, send: Send) -> None:
    method, path = scope["method"], scope["path"]
    if method == "GET":  # the flows of requests answered before this one, written now
        await asyncio.to_thread(flows.settle)
    params = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    rest = path.removeprefix("/admin/flows").strip("/")
    if not rest:
        await _flow_list(flows, method, path, params, send)
        return
    if rest == ".har":
        _method(method, "GET", path)
        selected = await asyncio.to_thread(_selection, flows, params)
        body = json.dumps(to_har(selected), ensure_ascii=False).encode()
        await send_bytes(send, 200, body, b"application/json")
        return
    if rest == "import" and method == "POST":
        await _import(flows, scope, receive, params, send)
        return
    _method(method, "GET", path)
    await _one_flow(flows, rest, send)


async def _flow_list(
    flows: FlowStore, method: str, path: str, params: dict[str, list[str]], send: Send
) -> None:
    """``/admin/flows``: a page of the flows' summaries (GET), or every flow deleted."""
    if method == "DELETE":
        deleted = await asyncio.to_thread(flows.clear)
        await send_json(send, 200, {"deleted": deleted})
        return
    _method(method, "GET", path)
    offset = _int(params, "offset", 0, 10**9)
    limit = _int(params, "limit", 100, 1000)
    outcomes = _outcomes(params)
    items, total = await asyncio.to_thread(flows.summaries, offset, limit, outcomes)
    await send_json(
        send,
        200,
        {
            "flows": [s.to_json() for s in items],
            "total": total,
            "offset": offset,
            "limit": limit,
        },
    )


async def _one_flow(flows: FlowStore, rest: str, send: Send) -> None:
    """``/admin/flows/{id}``: its view, ``.har``, ``/summary`` or one leg's SSE or timing."""
    flow_id, _, leg_file = rest.partition("/")
    if leg_file == "summary":  # (linted now, if it was not yet)
        summary = await asyncio.to_thread(flows.summary, flow_id)
        if summary is None:
            raise errors.not_found(f"no flow {flow_id!r}", "flow_not_found")
        await send_json(send, 200, summary.to_json())
        return
    har = flow_id.endswith(".har")
    flow = await asyncio.to_thread(flows.get, flow_id.removesuffix(".har"))
    if flow is None:
        raise errors.not_found(f"no flow {flow_id.removesuffix('.har')!r}", "flow_not_found")
    if leg_file:
        name, _, kind = leg_file.partition(".")
        leg = {"client": flow.client_leg, "upstream": flow.upstream_leg}.get(name)
        if leg is None or kind not in ("sse", "sse.timing"):
            raise errors.not_found(
                f"no {leg_file!r}: ask for client.sse or upstream.sse (or .sse.timing)"
            )
        if kind == "sse":
            await send_bytes(send, 200, export_sse(leg), b"text/event-stream")
        else:
            await send_bytes(send, 200, export_timing(leg), b"application/json")
        return
    if har:
        body = json.dumps(to_har([flow]), ensure_ascii=False).encode()
        await send_bytes(send, 200, body, b"application/json")
        return
    await send_json(send, 200, await asyncio.to_thread(flow_view, flow))


def _outcomes(params: dict[str, list[str]]) -> list[str]:
    """The outcomes ``?outcome=A,B`` asks for (none: every flow)."""
    given = [o.strip() for v in params.get("outcome", []) for o in v.split(",") if o.strip()]
    known = [str(o) for o in Outcome]
    for outcome in given:
        if outcome not in known:
            raise errors.bad_request(
                f"unknown outcome {outcome!r} (known: {', '.join(known)})", "outcome"
            )
    return given


def _selection(flows: FlowStore, params: dict[str, list[str]]) -> list[Flow]:
    """The flows a HAR export asks for (``ids``, or a page), oldest first for a page."""
    given = [i.strip() for v in params.get("ids", []) for i in v.split(",") if i.strip()]
    if given:
        ids = list(dict.fromkeys(given))
        if len(ids) > MAX_SELECTION:
            raise errors.bad_request(f"at most {MAX_SELECTION} ids at once", "ids")
    else:
        offset = _int(params, "offset", 0, 10**9)
        ids = flows.ids(offset, _int(params, "limit", 100, MAX_SELECTION))[::-1]
    out = []
    for flow_id in ids:
        flow = flows.get(flow_id)
        if flow is None:
            raise errors.not_found(f"no flow {flow_id!r}", "flow_not_found")
        out.append(flow)
    return out


async def _import(
    flows: FlowStore, scope: Scope, receive: Receive, params: dict[str, list[str]], send: Send
) -> None:
    protocol = params.get("protocol", [None])[0]
    if protocol is not None and protocol not in PROTOCOLS:
        known = ", ".join(PROTOCOLS)
        raise errors.bad_request(f"unknown protocol {protocol!r} (known: {known})", "protocol")
    data = await receive_body(receive, IMPORT_LIMIT, header(scope, b"content-length"))
    content_type = header(scope, b"content-type")
    try:
        read = await asyncio.to_thread(read_flows, data, content_type, protocol)
    except UnreadableImport as exc:
        raise errors.bad_request(f"cannot import this file: {exc}") from None
    summaries = await asyncio.to_thread(flows.add, read)
    listed = [s.to_json() for s in summaries]
    await send_json(send, 201, {"imported": len(listed), "flows": listed})


__all__ = ["handle_admin"]
