"""The port check: can the proxy listen where the config says, and if not, is it a
StreamScope proxy that already does.

Who listens is asked at ``GET /health``, which a StreamScope proxy answers without a key
(so asking is no refusal in its window, and another program is never sent a key); only
then is its ``/v1/models`` asked with this config's key. Both carry doctor's User-Agent
(:data:`~streamscope.proxy.refusals.DOCTOR_AGENT`), so a refused key reads as doctor's."""

from __future__ import annotations

import errno

import httpx

from streamscope import __version__
from streamscope.config import ProxyConfig
from streamscope.doctor.check import Check
from streamscope.proxy.refusals import DOCTOR_AGENT
from streamscope.proxy.server import PortInUse, bind

LOCAL_SECONDS = 2.0  # to wait for the program on a taken port
PORT_FIX = "choose another with --port or set [proxy] port in the config"
_IN_USE = {errno.EADDRINUSE, getattr(errno, "WSAEADDRINUSE", errno.EADDRINUSE)}
AGENT = {"user-agent": f"{DOCTOR_AGENT}/{__version__}"}
STORAGES = ("sqlite", "postgresql")  # what a StreamScope proxy's /health names (proxy/core.py)


async def check_port(proxy: ProxyConfig, client: httpx.AsyncClient) -> Check:
    host, port = proxy.host, proxy.port
    if port == 0:
        return Check("port", "ok", f"port 0: the proxy takes any free port on {host}")
    try:
        bind(host, port).close()
    except PortInUse as exc:
        if exc.errno in _IN_USE:
            return await _who_listens(proxy, client)
        if exc.errno == errno.EACCES:
            return Check("port", "fail", f"no permission to listen on port {port}", PORT_FIX)
        if exc.errno == errno.EADDRNOTAVAIL:
            fix = 'set [proxy] host = "127.0.0.1" (or --host) or an address of this machine'
            return Check("port", "fail", f"{host} is not an address of this machine", fix)
        return Check("port", "fail", f"{exc.strerror}", PORT_FIX)
    except OSError as exc:  # getaddrinfo: a host name that does not resolve
        fix = 'set [proxy] host = "127.0.0.1" (or --host)'
        return Check("port", "fail", f"cannot resolve host {host}: {exc.strerror or exc}", fix)
    return Check("port", "ok", f"{host}:{port} is free")


async def _who_listens(proxy: ProxyConfig, client: httpx.AsyncClient) -> Check:
    """Whether the program on the taken port is StreamScope (its ``/health`` answer), and
    if it is, whether it takes this config's key (see the module docstring)."""
    host = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(proxy.host, proxy.host)
    root = f"http://{f'[{host}]' if ':' in host else host}:{proxy.port}"
    quick = min(client.timeout.read or LOCAL_SECONDS, LOCAL_SECONDS)  # it is on this machine
    if not await _is_streamscope(client, root, quick):
        where = f"{proxy.host}:{proxy.port}"
        return Check("port", "fail", f"port {where} is taken by another program", PORT_FIX)
    whose = "with other local keys than this config's"
    if proxy.api_keys:
        key = proxy.api_keys[0].get_secret_value()
        try:
            auth = {**AGENT, "authorization": f"Bearer {key}"}
            mine = await client.get(f"{root}/v1/models", headers=auth, timeout=quick)
            if mine.status_code == 200:
                whose = "it takes this config's local key"
        except httpx.HTTPError:
            pass
    return Check(
        "port",
        "warn",
        f"StreamScope is already running on port {proxy.port} ({proxy.host}): {whose}",
        f"use that one, or stop it first; to run another, {PORT_FIX}",
    )


async def _is_streamscope(client: httpx.AsyncClient, root: str, wait: float) -> bool:
    try:
        answer = await client.get(f"{root}/health", headers=AGENT, timeout=wait)
        body = answer.json() if answer.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return False
    return isinstance(body, dict) and body.get("status") == "ok" and body.get("storage") in STORAGES


__all__ = ["check_port"]
