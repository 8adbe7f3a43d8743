"""The embedded proxy as the window sees it: start, stop, move to another port.

The proxy is the core's :class:`~streamscope.proxy.server.ProxyServer`, served as a task
on the window's qasync loop. This object only holds it and reports what happened through
a Qt signal; a taken port is a state to show, not an exception that ends the app.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from streamscope.config import Config
from streamscope.proxy.app import ProxyApp
from streamscope.proxy.server import PortInUse, ProxyServer


class ProxyControl(QObject):
    """``changed`` is emitted with a one-line state: "running", "stopped", or why not."""

    changed = Signal(str)

    def __init__(
        self,
        config: Config,
        state_path: Path | None = None,
        capture_path: Path | None = None,
    ) -> None:
        super().__init__()
        self.config = config.with_defaults()
        # One app for the window's lifetime: its pool and flows survive a restart on
        # another port (only the listening socket changes).
        self.app = ProxyApp(self.config, state_path=state_path, capture_path=capture_path)
        self.server: ProxyServer | None = None
        self.error: str | None = None
        self._started = False

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
            self.error = f"{exc.strerror}: choose another port"
            self.changed.emit(self.error)
            return False
        self.server, self.error = server, None
        self.changed.emit("running")
        return True

    async def stop(self) -> None:
        """Stop listening; "stopped" is reported once the port is free again."""
        server = self.server
        if server is not None:
            await server.stop()
        self.server = None
        self.changed.emit("stopped")

    async def close(self) -> None:
        """Stop listening and close the pool and the capture (the window is closing)."""
        await self.stop()
        await self.app.aclose()


__all__ = ["ProxyControl"]
