"""Guards on where the proxy listens and where its keys are kept: an address other
machines reach needs admin keys (long, and not client keys) and named hosts
(:func:`exposure_problem`); a config file holding keys must not be readable by others
(:func:`keys_exposed`)."""

from __future__ import annotations

import ipaddress
from pathlib import Path

from streamscope.config.model import Config, ProxyConfig


def is_loopback(host: str) -> bool:
    """Only this machine can connect to ``host`` (``0.0.0.0`` and ``::`` are every
    interface; a name other than localhost may resolve to anything)."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


ADMIN_KEY_MIN = 24
"""The shortest admin key accepted on an address other machines reach: /admin shows
every captured prompt, and a short key can be guessed over the network."""


def exposure_problem(proxy: ProxyConfig) -> str | None:
    """Why the proxy must not listen where it is told to, else None: on an address other
    machines reach, the admin API (flows hold every prompt; the pool can be switched
    off) needs its own keys, long and distinct from the client keys, and the Host guard
    the names clients will use (``*`` would let any rebinding domain through)."""
    if is_loopback(proxy.host):
        return None
    where = f"[proxy] host = {proxy.host!r} is reachable from other machines"
    missing = [
        name
        for name, given in (
            ("admin_keys", proxy.admin_keys),
            ("allowed_hosts", proxy.allowed_hosts),
        )
        if not given
    ]
    if missing:
        return (
            f"{where}: set "
            + " and ".join(f"[proxy] {m}" for m in missing)
            + " first (admin_keys guard /admin, which shows every captured prompt; "
            "allowed_hosts names the Host clients use); README, 'A shared proxy'"
        )
    admin = [k.get_secret_value() for k in proxy.admin_keys]
    short = sum(len(k) < ADMIN_KEY_MIN for k in admin)
    if short:
        return (
            f"{where}: {short} of [proxy] admin_keys {'is' if short == 1 else 'are'} shorter "
            f"than {ADMIN_KEY_MIN} characters; use long random keys (openssl rand -hex 24 "
            "makes one); README, 'A shared proxy'"
        )
    clients = {k.get_secret_value() for k in proxy.api_keys}
    if any(k in clients for k in admin):
        return (
            f"{where}: a key is in both [proxy] admin_keys and [proxy] api_keys, so every "
            "client could read every captured prompt; give /admin keys of its own"
        )
    if "*" in proxy.allowed_hosts:
        return (
            f'{where}: [proxy] allowed_hosts = ["*"] accepts any Host, which lets a web page '
            "on a rebinding domain reach the proxy; name the hosts clients use"
        )
    return None


PLAIN_HTTP_WARNING = (
    "the proxy listens on {host!r} over plain HTTP: keys and prompts cross the network "
    "unencrypted; put it behind a TLS terminator (or an SSH tunnel) for anything but a "
    "trusted LAN"
)


def keys_exposed(config: Config, path: Path) -> str | None:
    """A warning when the config file holds keys and other users may read it, else None."""
    keys = list(config.proxy.api_keys) + list(config.proxy.admin_keys)
    keys += [a.api_key for u in config.upstreams for a in u.accounts]
    if config.storage.url is not None:  # (its password)
        keys.append(config.storage.url)
    if not any(k.get_secret_value() for k in keys):
        return None
    from streamscope.private import exposed

    why = exposed(path)
    if why is None:
        return None
    return f"{path} holds API keys and other users can read it ({why}); run: chmod 600 {path}"
