"""The proxy on a real port: uvicorn serving :class:`~streamscope.proxy.app.ProxyApp`.

Runs headless (``streamscope serve``, whose own handlers turn SIGINT/SIGTERM into
:meth:`ProxyServer.request_stop`) or embedded as a task on the GUI's qasync loop.

NOTE (docs/stack-notes.md): we bind the listening socket ourselves, so a taken port is
a plain ``OSError`` here rather than uvicorn's ``sys.exit``; it is created with
``IPPROTO_TCP`` because a socket with ``proto == 0`` makes asyncio skip TCP_NODELAY,
which adds ~45 ms to every response's first body chunk. uvicorn 0.54 takes the process's
signals in ``capture_signals()`` while serving and re-raises them after shutting down
(so SIGTERM still kills the process, with status -15); our server turns that off: the
GUI keeps its Ctrl-C, and ``streamscope serve`` installs its own handlers that ask for a
graceful stop and then exit 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import socket
from collections.abc import Generator
from pathlib import Path

import uvicorn

from streamscope.config import (
    PLAIN_HTTP_WARNING,
    Config,
    ConfigError,
    exposure_problem,
    is_loopback,
)
from streamscope.proxy.app import ProxyApp
from streamscope.proxy.limits import AcceptErrorFilter, Limits, protocol_class

log = logging.getLogger("streamscope.proxy")

# One per process: asyncio logs each failed accept() under EMFILE with a traceback.
_ACCEPT_FILTER = AcceptErrorFilter()


def tune_gc() -> None:
    """Garbage-collector settings for a process that serves the proxy (``serve``, the
    GUI): call once, after startup imports.

    NOTE: capture keeps each stream's frames alive until its flow is written, tens of
    thousands of objects for a long stream, and CPython's cyclic collector walks them on
    every older-generation collection: measured with tests/bench/bench_proxy.py, that cost
    a third of full-speed throughput (0.57 -> 0.39 of direct), while the capture's own
    work is ~2 us a frame. Freezing the startup objects (modules, codecs: never garbage)
    and collecting the young generation every 10,000 allocations instead of 700 brings
    it back to ~0.53. Memory is freed by reference counting either way; only cycles wait.

    The middle generation is collected every 3 young passes, not 20: in the GUI (which
    runs the proxy on the GUI thread's loop) a pass over 20 young generations' survivors was
    the window's longest stall, 60-90 ms (tests/bench/bench_window.py); over 3 it is
    10-30 ms. The old generation waits 30 of those (and CPython's own rule: until it
    has grown by a quarter since its last pass).
    """
    gc.freeze()
    gc.set_threshold(10_000, 3, 30)


class PortInUse(OSError):
    pass


class _QuietServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


def bind(host: str, port: int) -> socket.socket:
    """A listening-ready TCP socket on host:port (port 0: any free port)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto or socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise PortInUse(exc.errno, f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.setblocking(False)
    return sock


class ProxyServer:
    """``await start()`` binds and serves in a task; ``await stop()`` shuts down cleanly."""

    def __init__(
        self,
        config: Config,
        app: ProxyApp | None = None,
        state_path: Path | None = None,
        capture_path: Path | None = None,
        lifespan: bool = True,
    ):
        """``lifespan`` False: the app is started and closed by the owner, not by the
        server (the GUI keeps one app while it moves the server to another port)."""
        self.config = config
        self.app = app or ProxyApp(config, state_path=state_path, capture_path=capture_path)
        self.lifespan = lifespan
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None
        self._socket: socket.socket | None = None
        proxy = config.proxy
        self.limits = Limits(
            proxy.max_header_bytes, proxy.header_timeout_seconds, proxy.max_connections
        )

    @property
    def port(self) -> int:
        assert self._socket is not None, "not started"
        return int(self._socket.getsockname()[1])

    @property
    def url(self) -> str:
        host = self.config.proxy.host
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.port}"

    async def start(self) -> None:
        """Bind and serve; ``ConfigError`` when the address needs guards the config lacks
        (:func:`~streamscope.config.exposure_problem`)."""
        proxy = self.config.proxy
        problem = exposure_problem(proxy)
        if problem:
            raise ConfigError(problem)
        self._socket = bind(proxy.host, proxy.port)
        if not is_loopback(proxy.host):  # said once, at each start
            log.warning(PLAIN_HTTP_WARNING.format(host=proxy.host))
        asyncio_log = logging.getLogger("asyncio")
        if _ACCEPT_FILTER not in asyncio_log.filters:
            asyncio_log.addFilter(_ACCEPT_FILTER)
        uv_config = uvicorn.Config(
            self.app,
            http=protocol_class(self.limits),  # httptools, with the limits (limits.py)
            ws="none",
            lifespan="on" if self.lifespan else "off",
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=3,
        )
        self._server = _QuietServer(uv_config)
        self._task = asyncio.create_task(self._server.serve(sockets=[self._socket]))
        while not self._server.started:
            if self._task.done():
                self._task.result()
                raise RuntimeError("the proxy server stopped while starting")
            await asyncio.sleep(0.005)

    def request_stop(self) -> None:
        """Ask the server to shut down gracefully (safe from a signal handler); attached
        windows' live feeds end at once (a graceful stop would wait for them)."""
        if self._server is not None:
            self._server.should_exit = True
        self.app.core.feed.end_streams()

    async def wait(self) -> None:
        """Until the server stops (Ctrl-C when it handles signals)."""
        if self._task is not None:
            await self._task

    async def stop(self) -> None:
        self.request_stop()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._socket is not None:
            self._socket.close()
