"""The port check: can the proxy listen where the config says, and if not, is it a
StreamScope proxy that already does."""

from __future__ import annotations

import errno

import httpx

from streamscope.config import ProxyConfig
from streamscope.doctor.check import Check
from streamscope.proxy.server import PortInUse, bind

# Words only a StreamScope proxy answers with (proxy/app.py: _check_key, _check_host).
PROXY_MARKERS = ("the proxy's local keys", "[proxy] allowed_hosts")
LOCAL_SECONDS = 2.0  # to wait for the program on a taken port
PORT_FIX = "choose another with --port or set [proxy] port in the config"
_IN_USE = {errno.EADDRINUSE, getattr(errno, "WSAEADDRINUSE", errno.EADDRINUSE)}


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
    """Whether the program on the taken port is a StreamScope proxy: asked first without
    a key (a StreamScope proxy says what key it wants), so no other program ever gets the
    local key; then, if it is one, whether it takes this config's key."""
    host = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(proxy.host, proxy.host)
    url = f"http://{f'[{host}]' if ':' in host else host}:{proxy.port}/admin/pool"
    where = f"{proxy.host}:{proxy.port}"
    quick = min(client.timeout.read or LOCAL_SECONDS, LOCAL_SECONDS)  # it is on this machine
    try:
        answer = await client.get(url, timeout=quick)
    except httpx.HTTPError:
        answer = None
    if answer is None or not any(m in answer.text for m in PROXY_MARKERS):
        return Check("port", "fail", f"port {where} is taken by another program", PORT_FIX)
    whose = "with other local keys than this config's"
    if proxy.api_keys:
        key = proxy.api_keys[0].get_secret_value()
        try:
            auth = {"authorization": f"Bearer {key}"}
            mine = await client.get(url, headers=auth, timeout=quick)
            if mine.status_code == 200:
                whose = "it takes this config's local key"
        except httpx.HTTPError:
            pass
    return Check(
        "port",
        "warn",
        f"a StreamScope proxy is already listening on {where} ({whose})",
        f"use that one, or stop it first; to run another, {PORT_FIX}",
    )


__all__ = ["check_port"]
