"""The flows of a ``streamscope serve`` elsewhere: :class:`RemoteFlows`.

It reads them over the proxy's admin API (``/admin/flows``, ``/admin/flows/{id}``) with
an admin key, and follows its live feed (``/admin/events``, ``proxy/feed.py``), telling
listeners the same :data:`~streamscope.capture.events.FlowEvent` s the local flow store
tells, so a view fed by one is fed by the other:

- a new flow is a ``FlowAdded`` with its summary, a deletion ``FlowsDeleted``, a clear
  ``FlowsCleared``;
- a dropped connection is retried after :data:`RETRY` seconds with ``Last-Event-ID``,
  so nothing is missed or told twice; when the proxy cannot replay what was missed (it
  restarted, or too much happened), it says ``reset`` and this tells ``FlowsCleared``
  and then a ``FlowAdded`` for each flow it lists (:data:`RELOAD` at most, oldest
  first);
- a refused key ends the following: :attr:`RemoteFlows.error` says why, and
  :attr:`RemoteFlows.status` listeners hear it;
- an event this cannot read (no JSON, a summary of the wrong shape) is skipped and
  counted (:attr:`RemoteFlows.skipped`, one log line per :data:`SKIP_LOG_EVERY`), and
  any other failure of the feed (a line over :data:`MAX_LINE`, a reload refused, a bug)
  is a dropped feed: the status says "retrying" with why, and it is asked again. The
  follower never ends while the status reads "live".

The pool's changes in the feed are handed on as they come (``pool_events``: each read as
the pool's own :class:`~streamscope.pool.source.PoolEvent`; one that cannot be read is
skipped and counted like any event), for the pool panel.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any

import httpx

from streamscope.capture.events import FlowAdded, FlowEvent, FlowsCleared, FlowsDeleted, FlowUpdated
from streamscope.capture.flow import Flow
from streamscope.capture.summary import FlowSummary
from streamscope.net.clients import admin_http
from streamscope.net.errors import NetError, httpx_errors
from streamscope.pool.source import PoolEvent
from streamscope.signals import Signal
from streamscope.wire import Frame, FrameTooLarge, SSEDecoder

log = logging.getLogger("streamscope.remote")

RETRY = 1.0  # seconds before a dropped feed is asked again
READ_TIMEOUT = 40.0  # the feed sends a keepalive every 15 s: silence this long is a drop
RELOAD = 500  # flows listed again after a reset
MAX_LINE = 8 * 1024 * 1024
"""The longest feed line (and event) read: a summary is a few KiB; without a bound a
hostile or broken proxy's 400 MB line took the window from 45 to 570 MB."""
SKIP_LOG_EVERY = 100  # an unreadable event is logged the first time and every this many


class RemoteError(Exception):
    """The remote proxy refused (a wrong admin key) or answered what this cannot read."""


class RemoteFlows:
    """Flows of the proxy at ``url``, read with ``admin_key`` (see the module docstring).
    :meth:`start` follows its feed on the running loop; :meth:`aclose` stops."""

    def __init__(self, url: str, admin_key: str, *, last_event_id: str | None = None) -> None:
        self.url = url.rstrip("/")
        self.last_event_id = last_event_id  # the last event told (resume after it)
        self.events: Signal[FlowEvent] = Signal("the remote flows")
        self.pool_events: Signal[PoolEvent] = Signal("the remote pool")
        self.status: Signal[str] = Signal("the remote feed")  # "live", "retrying", error
        self.error: str | None = None
        self.live = False
        self.skipped = 0  # events that could not be read, and were passed over
        self._client = admin_http(admin_key, READ_TIMEOUT)
        self._task: asyncio.Task[None] | None = None

    def subscribe(
        self, listener: Callable[[FlowEvent], None], loop: asyncio.AbstractEventLoop | None = None
    ) -> Callable[[], None]:
        return self.events.subscribe(listener, loop)

    # -- reading --------------------------------------------------------------------------

    async def summaries(self, offset: int = 0, limit: int = 100) -> tuple[list[FlowSummary], int]:
        """Newest first, and their total (as the local store's ``summaries``)."""
        query = {"offset": offset, "limit": limit}
        with httpx_errors():
            response = await self._client.get(self.url + "/admin/flows", params=query)
        return summaries_of(checked(response, self.url))

    async def get(self, flow_id: str) -> Flow | None:
        """The whole flow (both legs, every frame), or None when the proxy has none."""
        with httpx_errors():
            response = await self._client.get(f"{self.url}/admin/flows/{flow_id}")
        if response.status_code == 404:
            return None
        return flow_of(checked(response, self.url), flow_id)

    # -- following ------------------------------------------------------------------------

    async def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._follow(), name="remote-feed")

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self._client.aclose()

    async def _follow(self) -> None:
        while True:
            try:
                with httpx_errors():
                    refused = await self._read_feed()
                if refused:
                    return  # the key was refused: said, not retried
                why = "the feed ended"
            except asyncio.CancelledError:
                raise
            except (NetError, RemoteError, FrameTooLarge) as exc:
                why = str(exc) or type(exc).__name__
            except Exception as exc:  # a follower that died would leave "live" standing
                log.exception("remote feed %s failed", self.url)
                why = f"{type(exc).__name__}: {exc}"
            log.info("remote feed %s: %s; again in %g s", self.url, why, RETRY)
            self._set_live(False, why)
            await asyncio.sleep(RETRY)

    async def _read_feed(self) -> bool:
        """Follow one connection of the feed until it ends; True when the key was
        refused (nothing more to try)."""
        headers = {"accept": "text/event-stream", "cache-control": "no-store"}
        if self.last_event_id:
            headers["last-event-id"] = self.last_event_id
        async with self._client.stream("GET", self.url + "/admin/events", headers=headers) as r:
            if r.status_code in (401, 403):
                await r.aread()
                self._fail(f"the proxy refused the admin key ({_said(r)})")
                return True
            if r.status_code != 200:
                await r.aread()
                raise RemoteError(f"the feed answered {r.status_code}")
            self._set_live(True)
            decoder = SSEDecoder(max_line_bytes=MAX_LINE)
            async for chunk in r.aiter_bytes():
                for frame in decoder.feed(chunk):
                    await self._take(frame)
        return False

    async def _take(self, frame: Frame) -> None:
        if frame.data is None and frame.event is None:
            return  # a keepalive
        name = frame.event or "message"
        if name == "reset":
            await self._reload()
        else:
            try:
                self._tell(name, json.loads(frame.data) if frame.data else {})
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                self.skipped += 1
                if self.skipped % SKIP_LOG_EVERY == 1:
                    log.warning(
                        "remote feed %s: an event that cannot be read was skipped (%s: %s; "
                        "%d so far)",
                        self.url,
                        name,
                        exc,
                        self.skipped,
                    )
        if frame.id:
            self.last_event_id = frame.id  # (told or skipped: a reconnect resumes after it)

    def _tell(self, name: str, data: Any) -> None:
        """One event of the feed to the listeners; an error for one of the wrong shape."""
        if name == "flow.added":
            self.events.emit(FlowAdded(_summary(data)))
        elif name == "flow.updated":
            self.events.emit(FlowUpdated(_summary(data)))
        elif name == "flows.deleted":
            ids = data.get("ids") if isinstance(data, dict) else None
            if not isinstance(ids, list):
                raise TypeError("flows.deleted without a list of ids")
            self.events.emit(FlowsDeleted(tuple(str(i) for i in ids)))
        elif name == "flows.cleared":
            self.events.emit(FlowsCleared())
        elif name == "pool.account":
            self.pool_events.emit(PoolEvent.from_json(data))

    async def _reload(self) -> None:
        """What was missed cannot be replayed: everything known goes, and the proxy's
        flows are told again."""
        items, _ = await self.summaries(0, RELOAD)
        self.events.emit(FlowsCleared())
        for summary in reversed(items):  # oldest first, as they were added
            self.events.emit(FlowAdded(summary))

    def _set_live(self, live: bool, why: str = "") -> None:
        """Say "live" when the feed is (once), and "retrying: why" at each drop."""
        if live:
            if not self.live:
                self.live = True
                self.status.emit("live")
            return
        self.live = False
        self.status.emit(f"retrying: {why}" if why else "retrying")

    def _fail(self, why: str) -> None:
        self.error = why
        self.live = False
        self.status.emit(why)


def _summary(data: Any) -> FlowSummary:
    if not isinstance(data, dict) or not isinstance(data.get("id"), str) or not data["id"]:
        raise TypeError("a flow summary that is no JSON object with an id")
    return FlowSummary.from_json(data)


def checked(response: httpx.Response, url: str) -> Any:
    """The JSON of an admin API answer; :class:`RemoteError` for a refusal or an error."""
    if response.status_code in (401, 403):
        raise RemoteError(f"the proxy at {url} refused the admin key ({_said(response)})")
    if response.status_code >= 400:
        raise RemoteError(f"{url} answered {response.status_code}: {_said(response)}")
    try:
        return response.json()
    except ValueError:
        raise RemoteError(f"{url} answered no JSON") from None


def summaries_of(data: Any) -> tuple[list[FlowSummary], int]:
    """A ``/admin/flows`` page: its summaries and the total."""
    flows = data.get("flows") if isinstance(data, dict) else None
    if not isinstance(flows, list):
        raise RemoteError("the proxy's flow list is not one")
    items = [FlowSummary.from_json(f) for f in flows if isinstance(f, dict)]
    return items, int(data.get("total") or len(items))


def flow_of(data: Any, flow_id: str) -> Flow:
    """A ``/admin/flows/{id}`` answer as a flow."""
    if not isinstance(data, dict) or "id" not in data:
        raise RemoteError(f"flow {flow_id}: the proxy's answer is no flow")
    return Flow.from_json(data)


def _said(response: httpx.Response) -> str:
    try:
        error = response.json().get("error")
        return str(error.get("message") if isinstance(error, dict) else error)
    except (ValueError, AttributeError):
        return response.text[:200]


__all__ = ["RELOAD", "RETRY", "RemoteError", "RemoteFlows", "checked", "flow_of", "summaries_of"]
