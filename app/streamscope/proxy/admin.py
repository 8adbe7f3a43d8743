"""The admin API under ``/admin``, guarded by the same local keys as the rest.

    GET  /admin/pool                               every upstream and account (keys masked
                                                   to their last 4 characters), the
                                                   classification rules, recent attempts
    POST /admin/pool/{upstream}/{account}/enable   switch an account on (clears a cooldown)
    POST /admin/pool/{upstream}/{account}/disable  switch it off until enabled again

Errors use the OpenAI envelope, like every endpoint that is not a client protocol's.
"""

from __future__ import annotations

from streamscope.pool.pool import AccountPool
from streamscope.proxy import errors
from streamscope.proxy.asgi import Send, send_json
from streamscope.proxy.errors import ProxyError


def _method(method: str, allowed: str, path: str) -> None:
    if method != allowed:
        raise ProxyError(405, f"{method} is not allowed on {path}", "invalid_request_error")


async def handle_admin(pool: AccountPool, method: str, path: str, send: Send) -> None:
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


__all__ = ["handle_admin"]
