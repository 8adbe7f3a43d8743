"""The flow store's changes told between replicas sharing a PostgreSQL database.

A replica that changes the flows sends, in the same transaction (delivered at commit),
``NOTIFY`` s on :data:`CHANNEL` (:func:`payloads`): JSON naming the sending replica
(``r``) and the flow ids added (``a``), deleted (``d``: retention), whose summary was
updated (``u``), or that every flow was cleared (``c``). A payload stays under
PostgreSQL's 8000-byte limit: the ids are split over several; an id too long for one
says ``x`` (re-read everything) instead.

:class:`PgFeed` hears them on every replica: it skips its own replica's (its store told
its listeners already) and tells the store's listeners the others' changes as the store's
own events, the summaries read from the database (a flow dropped meanwhile is not told).
The reading is done by a thread of its own, in the order heard (never on the database's
thread, which :meth:`Database.run` must not be called from). After the listening
connection was lost, what was missed is unknown: it tells ``FlowsCleared`` and then a
``FlowAdded`` for each flow stored (the newest :data:`RELOAD`, oldest first), as a
remote window does after a reset.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Callable, Iterable
from typing import Any

from streamscope.capture.events import FlowAdded, FlowEvent, FlowsCleared, FlowsDeleted, FlowUpdated
from streamscope.capture.summary import FlowSummary
from streamscope.storage.database import Database, StorageError

log = logging.getLogger("streamscope.capture")

CHANNEL = "streamscope_flows"
MAX_PAYLOAD = 7900  # bytes of one NOTIFY payload, at most (PostgreSQL refuses 8000)
RELOAD = 2000  # flows told again after a lost connection, at most
ReadSummaries = Callable[[list[str]], dict[str, str]]  # ids -> their stored summaries
ReadNewest = Callable[[int], list[str]]  # the newest n stored summaries, newest first


def _dumps(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"))  # ASCII: characters are bytes


def payloads(
    replica: str,
    *,
    added: Iterable[str] = (),
    deleted: Iterable[str] = (),
    updated: Iterable[str] = (),
    cleared: bool = False,
) -> list[str]:
    """The NOTIFY payloads telling a change, each at most :data:`MAX_PAYLOAD` bytes, in
    the order to send them (a clear, the flows added, those deleted, those updated)."""
    out = [_dumps({"r": replica, "c": True})] if cleared else []
    for key, ids in (("a", added), ("d", deleted), ("u", updated)):
        empty = len(_dumps({"r": replica, key: []}))
        part: list[str] = []
        size = empty
        for flow_id in ids:
            more = len(_dumps(flow_id)) + (1 if part else 0)
            if empty + more > MAX_PAYLOAD:  # (never a real id: an odd import's)
                out.append(_dumps({"r": replica, "x": True}))
                continue
            if size + more > MAX_PAYLOAD:
                out.append(_dumps({"r": replica, key: part}))
                part, size, more = [], empty, more - 1
            part.append(flow_id)
            size += more
        if part:
            out.append(_dumps({"r": replica, key: part}))
    return out


class PgFeed:
    """Tells ``emit`` the other replicas' changes (see the module docstring), from its
    making on (before or after the database's opening); :meth:`close` ends its thread."""

    def __init__(
        self,
        database: Database,
        read: ReadSummaries,
        newest: ReadNewest,
        emit: Callable[[FlowEvent], None],
    ) -> None:
        self.replica = database.replica
        self._read = read
        self._newest = newest
        self._emit = emit
        self._queue: queue.Queue[Any] = queue.Queue()
        database.listen(CHANNEL, self._queue.put)
        database.on_reconnect(lambda: self._queue.put(_RELOAD))
        self._thread = threading.Thread(target=self._work, name="flow-feed", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._queue.put(_STOP)
        self._thread.join(timeout=30)

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            try:
                if item is _RELOAD:
                    self._reload()
                else:
                    self._heard(item)
            except StorageError as exc:  # (an outage: the database says it; then a reload)
                log.debug("capture: a change of another replica not read: %s", exc)
            except Exception:
                log.exception("capture: a change of another replica not told")

    def _heard(self, payload: str) -> None:
        try:
            data = json.loads(payload)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            log.warning("capture: a flow notification that is no JSON object: %.80r", payload)
            return
        if data.get("r") == self.replica:
            return  # ours: told already
        if data.get("x"):
            self._reload()
        if data.get("c"):
            self._emit(FlowsCleared())
        added, deleted, updated = (_ids(data.get(key)) for key in ("a", "d", "u"))
        if added or updated:
            found = self._read(added + updated)
            for flow_id in added:
                if flow_id in found:
                    self._emit(FlowAdded(_summary(found[flow_id])))
            for flow_id in updated:
                if flow_id in found:
                    self._emit(FlowUpdated(_summary(found[flow_id])))
        if deleted:
            self._emit(FlowsDeleted(tuple(deleted)))

    def _reload(self) -> None:
        newest = self._newest(RELOAD)
        self._emit(FlowsCleared())
        for stored in reversed(newest):  # oldest first, as they were added
            self._emit(FlowAdded(_summary(stored)))


_STOP: Any = object()
_RELOAD: Any = object()


def _ids(value: Any) -> list[str]:
    return [str(i) for i in value] if isinstance(value, list) else []


def _summary(stored: str) -> FlowSummary:
    return FlowSummary.from_json(json.loads(stored))


__all__ = ["CHANNEL", "MAX_PAYLOAD", "PgFeed", "payloads"]
