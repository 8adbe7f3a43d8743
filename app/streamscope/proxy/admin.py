"""The admin API under ``/admin``, guarded by the same local keys as the rest.

    GET  /admin/pool                               every upstream and account (keys masked
                                                   to their last 4 characters), the
                                                   classification rules, recent attempts
    POST /admin/pool/{upstream}/{account}/enable   switch an account on (clears a cooldown)
    POST /admin/pool/{upstream}/{account}/disable  switch it off until enabled again
    GET  /admin/flows?offset=0&limit=100           flow summaries, newest first
    GET  /admin/flows/{id}                         a flow: both legs, frames, events
    GET  /admin/flows/{id}.har                     the flow as HAR 1.2
    GET  /admin/flows/{id}/{leg}.sse               a leg's raw bytes (leg: client, upstream)
    GET  /admin/flows/{id}/{leg}.sse.timing        its frames' arrival times (a replay sidecar)
    DELETE /admin/flows                            forget every flow

Errors use the OpenAI envelope, like every endpoint that is not a client protocol's.
"""

from __future__ import annotations

import asyncio
import json
from urllib.parse import parse_qs

from streamscope.capture.har import to_har
from streamscope.capture.sse import export_sse, export_timing
from streamscope.capture.store import FlowStore
from streamscope.capture.view import flow_view
from streamscope.pool.pool import AccountPool
from streamscope.proxy import errors
from streamscope.proxy.asgi import Send, send_bytes, send_json
from streamscope.proxy.errors import ProxyError


def _method(method: str, allowed: str, path: str) -> None:
    if method != allowed:
        raise ProxyError(405, f"{method} is not allowed on {path}", "invalid_request_error")


async def handle_admin(
    pool: AccountPool,
    flows: FlowStore | None,
    method: str,
    path: str,
    query: bytes,
    send: Send,
) -> None:
    if path == "/admin/flows" or path.startswith("/admin/flows/"):
        if flows is None:
            raise errors.not_found("capture is off ([capture] enabled = false)", "capture_off")
        await _flows(flows, method, path, query, send)
        return
    parts = path.strip("/").split("/")  # ["admin", "pool", upstream, account, action]
    if parts == ["admin", "pool"]:
        _method(method, "GET", path)
        await send_json(send, 200, pool.snapshot())
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


async def _flows(flows: FlowStore, method: str, path: str, query: bytes, send: Send) -> None:
    rest = path.removeprefix("/admin/flows").strip("/")
    if not rest:
        if method == "DELETE":
            deleted = await asyncio.to_thread(flows.clear)
            await send_json(send, 200, {"deleted": deleted})
            return
        _method(method, "GET", path)
        params = parse_qs(query.decode("latin-1"))
        offset = _int(params, "offset", 0, 10**9)
        limit = _int(params, "limit", 100, 1000)
        items, total = await asyncio.to_thread(flows.summaries, offset, limit)
        await send_json(
            send, 200, {"flows": items, "total": total, "offset": offset, "limit": limit}
        )
        return
    _method(method, "GET", path)
    flow_id, _, leg_file = rest.partition("/")
    har = flow_id.endswith(".har")
    flow = await asyncio.to_thread(flows.get, flow_id.removesuffix(".har"))
    if flow is None:
        raise errors.not_found(f"no flow {flow_id.removesuffix('.har')!r}", "flow_not_found")
    if leg_file:
        name, _, kind = leg_file.partition(".")
        leg = {"client": flow.client, "upstream": flow.upstream}.get(name)
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


__all__ = ["handle_admin"]
