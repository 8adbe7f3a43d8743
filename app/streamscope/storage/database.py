"""A PostgreSQL database shared by several ``streamscope serve`` replicas.

One :class:`Database` per process. It owns a thread running its own event loop, and on
it an asyncpg pool (asyncpg was chosen by measurement: ``tests/bench/bench_pg_driver``,
README "Running it for a team") and one listening connection. Nothing of the database
runs on the proxy's loop: the flow store's writer thread and readers call :meth:`run`
(blocking), the account pool calls :meth:`arun` (awaitable from any other loop), and
``NOTIFY`` payloads reach listeners (:meth:`listen`) on the database thread.

Outages: an operation that cannot reach the server raises :class:`StorageUnavailable`;
the first such failure is logged once ("unreachable"), the recovery once ("reachable
again"), and listeners of :attr:`state` are told both. The listening connection is
asked again every second while the server is away; after it is back, every
:meth:`on_reconnect` callback runs (a notification may have been missed: re-read).

Every error of an operation is one of two: a query's own error (the server answered
with an error, ``asyncpg.PostgresError`` but an outage's: :class:`StorageError`) or an
outage (anything else: :class:`StorageUnavailable`). The classes in :data:`DOWN` are
the known outages; any other exception the driver raises (asyncpg has raised
``InternalClientError`` and plain ``RuntimeError`` s on connections caught mid-operation
by a shutdown) is one too, said once per class: the operation's outcome is unknown,
its connection suspect, and the caller keeps what it has and tries again, rather than
dying of it. The listening task runs under :func:`~streamscope.storage.supervise.supervise`.

``replica`` names this process in what it writes and notifies (a NOTIFY comes back to
its sender too; the sender skips its own).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import logging
import socket
import threading
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar
from urllib.parse import urlsplit

import asyncpg

from streamscope.redact_places import mask_database_url
from streamscope.signals import Signal
from streamscope.storage.errors import StorageError, StorageUnavailable
from streamscope.storage.schema import LATEST, SchemaTooNew, current_version, migrate
from streamscope.storage.supervise import supervise

log = logging.getLogger("streamscope.storage")

T = TypeVar("T")
Work = Callable[[asyncpg.Connection], Awaitable[T]]
RETRY = 1.0  # seconds between two tries of the listening connection while it is down

# What an unreachable or restarting server raises (a query's own error is not one).
DOWN: tuple[type[BaseException], ...] = (
    OSError,
    TimeoutError,
    asyncpg.PostgresConnectionError,
    asyncpg.InterfaceError,
    asyncpg.exceptions.OperatorInterventionError,  # shut down by the admin, starting up
    asyncpg.exceptions.ConnectionFailureError,
    # a connection caught mid-operation as the server shuts down ("cannot switch to state
    # 15; another operation is in progress"): an outage, not a query's error; unmapped,
    # it escaped every handler and the shared pool's task died with it
    asyncpg.exceptions.InternalClientError,
)


def display_url(url: str) -> str:
    """``url`` with its password masked, for logs and messages (its userinfo's and a
    ``?password=`` parameter's: the one function doctor and ``serve`` use too)."""
    return mask_database_url(url)


class Database:
    """See the module docstring. :meth:`open` connects and migrates (raising
    :class:`StorageError` when it cannot); :meth:`close` ends the thread."""

    def __init__(
        self,
        url: str,
        *,
        replica: str | None = None,
        max_connections: int = 4,
        timeout: float = 10.0,
    ) -> None:
        self.url = url
        # (the host's name, for a reader of "served by"; the rest, so two are never one)
        self.replica = replica or f"{socket.gethostname()[:40]}-{uuid.uuid4().hex[:6]}"
        self.max_connections = max_connections
        self.timeout = timeout
        self.up = False
        self.state: Signal[bool] = Signal("the shared database")  # True: reachable
        self._pool: asyncpg.Pool | None = None
        self._listeners: dict[str, list[Callable[[str], None]]] = {}
        self._reconnect: list[Callable[[], None]] = []
        self._listen_task: asyncio.Task[None] | None = None
        self._listen_conn: asyncpg.Connection | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="database", daemon=True)
        self._closed = self._closing = False
        self._listened = False  # the listening connection was made once (a new one: missed)
        self.too_new: str | None = None  # why this replica stopped writing (a newer schema)
        self._listen_lock = asyncio.Lock()  # the listening connection's operations, one by one
        self._strange: set[str] = set()  # driver errors of no known class, said once each

    @property
    def where(self) -> str:
        """``host:port/database``: the server and the database, nothing secret."""
        parts = urlsplit(self.url)
        port = f":{parts.port}" if parts.port is not None else ""
        return f"{parts.hostname or 'localhost'}{port}{parts.path}"

    def __repr__(self) -> str:
        return f"Database({display_url(self.url)!r}, replica={self.replica!r})"

    # -- lifecycle ------------------------------------------------------------------------

    def open(self) -> None:
        self._thread.start()
        try:
            self._call(self._open(), self.timeout + 5)
        except BaseException:
            self.close()
            raise

    async def _open(self) -> None:
        try:
            self._pool = await asyncpg.create_pool(
                self.url,
                min_size=0,  # (1: asyncpg logs a traceback per try while the server is away)
                max_size=self.max_connections,
                timeout=self.timeout,
                command_timeout=self.timeout,
            )
            async with self._pool.acquire() as conn:
                await migrate(conn)
        except DOWN as exc:
            raise StorageUnavailable(
                f"cannot reach the database {display_url(self.url)}: {_say(exc)}"
            ) from None
        except (asyncpg.PostgresError, SchemaTooNew) as exc:
            raise StorageError(f"the database {display_url(self.url)}: {_say(exc)}") from None
        self.up = True  # (the first connection: nothing to say)
        listening = asyncio.Event()
        self._listen_task = asyncio.ensure_future(
            supervise("the database's listening task", lambda: self._listen_forever(listening))
        )
        await asyncio.wait_for(listening.wait(), self.timeout)  # (none missed from here)

    def close(self) -> None:
        if self._closed or self._closing:
            return
        self._closing = True
        if self._thread.is_alive():
            with contextlib.suppress(Exception):
                self._call(self._close(), 10)
        self._closed = True
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
        if not self._loop.is_running():
            self._loop.close()

    async def _close(self) -> None:
        if self._listen_task is not None:
            self._listen_task.cancel()
            with contextlib.suppress(BaseException):
                await self._listen_task
        if self._pool is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._pool.close(), 5)
            self._pool.terminate()
        # whatever asyncpg still runs (a connection being made, say) ends here, not with
        # the loop's closing
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in others:
            task.cancel()
        await asyncio.gather(*others, return_exceptions=True)

    # -- running work ---------------------------------------------------------------------

    def run(self, work: Work[T]) -> T:
        """Run ``work`` with a connection of the pool, on the database thread, and wait
        (any thread but that one). :class:`StorageUnavailable` when the server is away."""
        return self._call(self._with_connection(work), self.timeout + 5)

    async def arun(self, work: Work[T]) -> T:
        """:meth:`run` for a caller on another event loop (the proxy's)."""
        if self._closed or self._loop.is_closed():
            raise StorageUnavailable("the database connection is closed")
        try:
            future = asyncio.run_coroutine_threadsafe(self._with_connection(work), self._loop)
        except RuntimeError:  # (its loop closed meanwhile)
            raise StorageUnavailable("the database connection is closed") from None
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            if future.cancelled():  # the database's side was cancelled (its closing), not us
                raise StorageUnavailable("the database connection is closed") from None
            raise

    def _call(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        if self._closed:
            coro.close()
            raise StorageUnavailable("the database connection is closed")
        future: concurrent.futures.Future[T] = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise StorageUnavailable("the database did not answer in time") from None

    async def _with_connection(self, work: Work[T]) -> T:
        if self._pool is None:
            raise StorageUnavailable("the database is not open")
        if self.too_new is not None:
            raise StorageUnavailable(self.too_new)
        try:
            async with self._pool.acquire(timeout=self.timeout) as conn:
                result = await work(conn)
        except DOWN as exc:
            self._set_up(False, exc)
            raise StorageUnavailable(f"the database is unreachable: {_say(exc)}") from None
        except asyncpg.PostgresError as exc:
            raise StorageError(f"the database refused: {_say(exc)}") from exc
        except StorageError:
            raise
        except Exception as exc:  # no known class: an outage too (see the module docstring)
            self._unknown(exc)
            self._set_up(False, exc)
            raise StorageUnavailable(f"the database is unreachable: {_say(exc)}") from None
        self._set_up(True)
        return result

    def _unknown(self, exc: BaseException) -> None:
        name = f"{type(exc).__module__}.{type(exc).__qualname__}"
        if name not in self._strange:
            self._strange.add(name)
            log.warning("the database driver raised %s (%s): taken as an outage", name, _say(exc))

    # -- notifications --------------------------------------------------------------------

    def listen(self, channel: str, callback: Callable[[str], None]) -> None:
        """Call ``callback(payload)`` on the database thread for each NOTIFY on ``channel``
        (every replica's, this one's included), from this call's return on."""
        new = channel not in self._listeners
        self._listeners.setdefault(channel, []).append(callback)
        if new and self.up and not self._closed and self._thread.is_alive():
            self._call(self._add_channel(channel), self.timeout + 5)

    async def _add_channel(self, channel: str) -> None:
        conn = self._listen_conn
        if conn is not None and not conn.is_closed():
            async with self._listen_lock:  # (one operation at a time on a connection)
                await conn.add_listener(channel, self._deliver)
        # (else the listening connection is being made again, and takes every channel)

    def on_reconnect(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (on the database thread) each time the listening connection
        is back after a loss: notifications sent meanwhile are lost."""
        self._reconnect.append(callback)

    async def _listen_forever(self, listening: asyncio.Event) -> None:
        """Keep a listening connection (run again by its supervisor after a fault: a
        connection made after the first tells the reconnection callbacks)."""
        while True:
            conn: asyncpg.Connection | None = None
            try:
                conn = await asyncpg.connect(self.url, timeout=self.timeout)
                lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                conn.add_termination_listener(functools.partial(_end, lost))
                for channel in list(self._listeners):
                    await conn.add_listener(channel, self._deliver)
                self._listen_conn = conn
                listening.set()
                if self._listened:
                    self._set_up(True)
                    for callback in self._reconnect:
                        _safely(callback)
                self._listened = True
                while not lost.done() and not conn.is_closed():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(asyncio.shield(lost), RETRY)
                    if not lost.done():  # a quiet second: is the server still there?
                        async with self._listen_lock:
                            await self._check_schema(conn)
            except asyncio.CancelledError:
                if conn is not None:
                    with contextlib.suppress(Exception):
                        await asyncio.wait_for(conn.close(), 2)
                raise
            except DOWN as exc:
                self._set_up(False, exc)
            except asyncpg.PostgresError as exc:
                log.warning("the database's notifications: %s", _say(exc))
            except Exception as exc:  # no known class: an outage (its supervisor is for bugs)
                self._unknown(exc)
                self._set_up(False, exc)
            finally:
                self._listen_conn = None
                if conn is not None and not conn.is_closed():
                    conn.terminate()  # (a connection left behind keeps its LISTEN)
            self._listened = True
            await asyncio.sleep(RETRY)

    async def _check_schema(self, conn: asyncpg.Connection) -> None:
        """Each quiet second (is the server still there?) the schema's version: a newer
        StreamScope that migrated the database meanwhile makes this replica stop using it,
        said in one line; what it would write then waits and is shed as in an outage."""
        have = await current_version(conn)
        if have > LATEST and self.too_new is None:
            self.too_new = (
                f"the database {display_url(self.url)} was migrated by a newer StreamScope "
                f"(schema {have}; this one knows up to {LATEST}): this replica stops writing "
                "to it; upgrade it and start it again"
            )
            log.error("%s", self.too_new)
            self.up = False
            self.state.emit(False)

    def _deliver(self, _conn: Any, _pid: int, channel: str, payload: str) -> None:
        for callback in self._listeners.get(channel, ()):
            _safely(functools.partial(callback, payload))

    def _set_up(self, up: bool, exc: BaseException | None = None) -> None:
        if up == self.up or self.too_new is not None:  # (stopped for good: said once)
            return
        self.up = up
        if up:
            log.warning("the database %s is reachable again", display_url(self.url))
        else:
            log.warning(
                "the database %s is unreachable (%s): requests go on with what this replica"
                " knows; flows wait in memory, within their bound",
                display_url(self.url),
                _say(exc) if exc is not None else "no answer",
            )
        self.state.emit(up)


def _end(lost: asyncio.Future[None], _conn: Any) -> None:
    if not lost.done():
        lost.set_result(None)


def _say(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]


def _safely(callback: Callable[[], None]) -> None:
    try:
        callback()
    except Exception:
        log.exception("a database listener failed")


__all__ = ["Database", "StorageError", "StorageUnavailable", "display_url"]
