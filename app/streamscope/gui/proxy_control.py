"""The embedded proxy as the window sees it: start, stop, move to another port, and
run new settings.

The proxy is the core's :class:`~streamscope.proxy.server.ProxyServer`, served as a task
on the window's qasync loop. This object only holds it and reports what happened through
Qt signals; a taken port is a state to show, not an exception that ends the app.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from streamscope.config import Config, ConfigError
from streamscope.config.save import save_config
from streamscope.proxy.app import ProxyApp
from streamscope.proxy.core import Core
from streamscope.proxy.ports import free_port
from streamscope.proxy.server import PortInUse, ProxyServer


class ProxyControl(QObject):
    """The embedded proxy, as the window drives it (see the module docstring).

    It owns the config (:attr:`config`), the core (:attr:`core`: the pool and the
    captured flows, which the panes read directly), the app serving them and, while it
    listens, the server. :func:`~streamscope.gui.app.run_window` makes it; the window
    starts it and closes it, the status bar starts and stops it or moves it to another
    port, the settings dialog gives new settings to :meth:`apply`, and the client pane
    reads its :attr:`url` and :attr:`key` (and offers to start it when it is down).

    ``changed`` is emitted with a one-line state: "running", "stopped", or why not;
    ``replaced`` when :meth:`apply` has put a new :attr:`app` in place (views of the old
    core's flows and pool follow ``control.core`` then). Its coroutines run on the
    window's qasync loop, the server being a task on it; a slot starts them with
    ``asyncio.ensure_future`` and never waits."""

    changed = Signal(str)
    replaced = Signal()

    def __init__(
        self,
        config: Config,
        state_path: Path | None = None,
        capture_path: Path | None = None,
        config_path: Path | None = None,
    ) -> None:
        """``config_path``: where :meth:`apply` saves settings (None: they are not saved)."""
        super().__init__()
        self.config = config.with_defaults()
        # A config with no upstreams runs the built-in demo (with_defaults); Save keeps
        # it that way unless the demo was edited, so the file never gains an upstream
        # the user did not write (and a later default can still change).
        self._implicit = None if config.upstreams else self.config.upstreams
        self.config_path = config_path
        self._paths = (state_path, capture_path)
        # One core (its pool and flows) and one app per config: they survive a restart
        # on another port (only the listening socket changes); new settings get a new
        # core and app (apply()). The window reads the core, never through the app.
        self.core = Core(self.config, state_path, capture_path)
        self.app = ProxyApp(self.config, core=self.core)
        self.server: ProxyServer | None = None
        self.error: str | None = None
        self.suggested_port: int | None = None  # a free port, when the configured is taken
        self._started = False
        self._applying = asyncio.Lock()

    @property
    def running(self) -> bool:
        return self.server is not None

    @property
    def url(self) -> str | None:
        return self.server.url if self.server is not None else None

    @property
    def key(self) -> str:
        keys = self.config.proxy.api_keys
        return keys[0].get_secret_value() if keys else ""

    async def start(self, port: int | None = None) -> bool:
        """Listen (on ``port`` when given); False, with :attr:`error` set, when the port
        is taken."""
        if self.server is not None:
            return True
        if port is not None:
            self.config.proxy.port = port
        if not self._started:  # the pool's timers and probe, once for the app's life
            await self.app.start()
            self._started = True
        server = ProxyServer(self.config, app=self.app, lifespan=False)
        try:
            await server.start()
        except PortInUse as exc:
            taken = self.config.proxy.port
            self.suggested_port = free_port(self.config.proxy.host, taken)
            free = f" ({self.suggested_port} is free)" if self.suggested_port else ""
            self.error = f"{exc.strerror}: choose another port{free}"
            self.changed.emit(self.error)
            return False
        except ConfigError as exc:  # an address others reach, without its guards
            self.error = str(exc)
            self.changed.emit(self.error)
            return False
        self.server, self.error, self.suggested_port = server, None, None
        self.changed.emit("running")
        return True

    async def stop(self) -> None:
        """Stop listening; "stopped" is reported once the port is free again."""
        server = self.server
        if server is not None:
            await server.stop()
        self.server = None
        self.changed.emit("stopped")

    async def apply(self, config: Config) -> bool:
        """Save ``config`` (to :attr:`config_path`, when set) and run it in place of the
        current one: the server stops, the app closes (the pool's state and the flows
        are in their files, which the new app opens again), a new app is built and
        ``replaced`` emitted, then it starts listening on the new port, unless the proxy
        had been stopped on purpose. False, with :attr:`error` set, when the new port is
        taken. A save that fails raises (``ConfigError``, ``OSError``) with nothing
        changed."""
        async with self._applying:  # a second Save waits for the first
            if self.config_path is not None:
                await asyncio.to_thread(save_config, self._as_written(config), self.config_path)
            resume = self.running or self.error is not None
            await self.stop()
            await self.app.aclose()
            state_path, capture_path = self._paths
            self._implicit = self._implicit if config.upstreams == self._implicit else None
            if not config.upstreams:
                self._implicit = config.with_defaults().upstreams
            self.config = config.with_defaults()
            self.core = Core(self.config, state_path, capture_path)
            self.app = ProxyApp(self.config, core=self.core)
            self._started = False
            self.replaced.emit()
            if resume:
                return await self.start()
            await self.app.start()
            self._started = True
            return True

    def _as_written(self, config: Config) -> Config:
        """``config`` as the file should hold it: the implicit demo left out."""
        if self._implicit is not None and config.upstreams == self._implicit:
            return config.model_copy(update={"upstreams": []})
        return config

    async def close(self) -> None:
        """Stop listening and close the pool and the capture (the window is closing)."""
        await self.stop()
        await self.app.aclose()


__all__ = ["ProxyControl"]
