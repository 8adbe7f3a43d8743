"""``streamscope doctor``'s checks: the config, the proxy's port, each upstream, each account.

:func:`run_checks` returns one :class:`Check` per finding, in this order:

- ``config``: the file loads (a missing file is fine: the built-in demo upstream is
  used), then what validation lets through but a user would want to know: no local key
  yet, an upstream that needs a key and has no account or an empty ``api_key``, an alias
  that cannot resolve, a proxy listening beyond this machine;
- ``port``: the proxy's host:port can be bound (with the proxy's own :func:`bind`); if
  not, whether a StreamScope proxy is the one listening there;
- ``storage``: SQLite files, or the shared PostgreSQL database: that it answers, and
  its tables' version;
- ``upstream NAME``: one model listing per HTTP upstream, with the URL and key the proxy
  would use (the demo needs no network);
- ``account UPSTREAM/NAME`` (opt-in): one tiny request per account through the proxy's
  own :class:`~streamscope.proxy.upstream.HttpUpstream`, its failure classified by the
  pool's rules, so the words are the pool panel's.

Nothing here writes the config. Keys appear masked (``…abcd``) or not at all, and every
detail passes the config's :class:`~streamscope.redact.Redactor` (an upstream may echo a
key in its error message).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from pathlib import Path

import httpx

from streamscope.doctor.accounts import accounts_opt_in, check_accounts
from streamscope.doctor.check import Check, Status
from streamscope.doctor.config import check_config, config_warnings
from streamscope.doctor.port import check_port
from streamscope.doctor.storage import check_storage
from streamscope.doctor.upstreams import check_upstream
from streamscope.net.clients import upstream_http
from streamscope.net.http1 import Http1Client
from streamscope.net.tls import tls_context
from streamscope.pool.rules import rule_table
from streamscope.redact import Redactor


@dataclass(frozen=True, slots=True)
class Options:
    """What ``streamscope doctor`` was asked to check."""

    config_path: Path
    host: str | None = None  # overrides [proxy] host
    port: int | None = None  # overrides [proxy] port
    accounts: bool = False  # send one tiny request per account
    timeout: float = 10.0  # seconds for each connection and each answer


async def run_checks(options: Options) -> list[Check]:
    """Every check, in order; after a config that does not load, only that failure.
    Upstreams (and accounts) are checked at the same time, one connection each."""
    checks, config = check_config(options.config_path)
    if config is None:
        return checks
    if options.host:
        config.proxy.host = options.host
    if options.port is not None:
        config.proxy.port = options.port
    checks += config_warnings(config)
    full = config.with_defaults()
    client = upstream_http(config.proxy)
    client.timeout = httpx.Timeout(options.timeout)
    wire = Http1Client(
        connect_timeout=options.timeout, read_timeout=options.timeout, ssl_context=tls_context()
    )
    async with client:
        checks.append(await check_port(config.proxy, client))
        checks.append(await check_storage(config, options.timeout))
        listings = await asyncio.gather(*(check_upstream(u, client, wire) for u in full.upstreams))
        checks += [r.check for r in listings]
        http = [(u, r) for u, r in zip(full.upstreams, listings, strict=True) if not u.is_demo]
        if not options.accounts:
            checks.append(accounts_opt_in(sum(len(u.accounts) for u, _ in http)))
        else:
            rules = rule_table(full.pool)
            jobs = [check_accounts(u, r, client, wire, rules) for u, r in http]
            for found in await asyncio.gather(*jobs):
                checks += found
    await wire.aclose()
    redactor = Redactor.for_config(full)
    return [replace(c, detail=redactor.text(c.detail), fix=redactor.text(c.fix)) for c in checks]


__all__ = ["Check", "Options", "Status", "run_checks"]
