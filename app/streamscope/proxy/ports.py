"""A free port to offer when the configured one is taken.

The proxy binds its own socket (``proxy.server.bind``: ``IPPROTO_TCP``, ``SO_REUSEADDR``);
a port is offered only if a socket made the same way binds it now. The first free port
above the taken one is offered (the user's 8787 taken: 8788), else any port the system
picks (binding port 0). Nothing here listens: the check closes its socket at once, so
the port can still be taken by someone else before the user uses it — the proxy then
says so again.
"""

from __future__ import annotations

import socket

SCAN = 20  # ports tried above the taken one before asking the system for any


def _bound_port(host: str, port: int) -> int | None:
    """The port a socket made like the proxy's binds on ``host`` (``port`` 0: the
    system's pick); None when it cannot."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    except OSError:
        return None
    family, kind, proto, _, address = infos[0]
    try:
        with socket.socket(family, kind, proto or socket.IPPROTO_TCP) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
            return int(sock.getsockname()[1])
    except OSError:
        return None


def is_free(host: str, port: int) -> bool:
    """Whether the proxy could listen on ``host:port`` now."""
    return 0 < port < 65536 and _bound_port(host, port) == port


def free_port(host: str, taken: int | None = None, scan: int = SCAN) -> int | None:
    """A port the proxy could listen on at ``host``: the first free one after ``taken``
    (up to ``scan`` of them), else one the system picks; None when even that fails (the
    host cannot be bound at all)."""
    if taken:
        for port in range(taken + 1, min(taken + 1 + scan, 65536)):
            if is_free(host, port):
                return port
    return _bound_port(host, 0)


__all__ = ["free_port", "is_free"]
