"""Requests the proxy refused before they became a flow: counted, and the latest kept.

"My client shows nothing" is often a request that never got past the door: no key, a
wrong key, a Host the DNS-rebinding guard refused, a base URL that lands on no endpoint,
a body that is not JSON, a web page or a client key at ``/admin``. Those are not flows
(a flood of them must never push real flows out of the capture's retention), but the
user has to see them. :class:`RefusalLog` counts them by reason and keeps a short ring
of the latest, with what identifies the client (``Origin``, ``User-Agent``) and the
masked suffix of the key it sent. It never keeps a body.

Each refused request's log line goes through :meth:`RefusalLog.log`, which writes the
first :data:`LOG_BURST` of every :data:`LOG_INTERVAL` seconds in full and counts the
rest, saying them in one line per interval with their exact number by reason: a flood
of keyless requests once grew the log by 554,000 lines in two minutes. The
counters themselves (:attr:`RefusalLog.counts`, ``/admin/refusals``) count every one.

Listeners (the window, through a Qt signal) are called on the proxy's event loop with
each new :class:`Refusal`; :meth:`RefusalLog.subscribe` returns the unsubscribe.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal

from streamscope.codecs.preview_text import short
from streamscope.redact import MIN_SECRET, mask
from streamscope.signals import Signal

Reason = Literal[
    "no-key",
    "wrong-key",
    "client-key",
    "admin-origin",
    "host",
    "unknown-path",
    "method",
    "not-json",
]

REASONS: dict[str, str] = {
    "no-key": "no API key",
    "wrong-key": "wrong API key",
    "client-key": "client key on /admin",
    "admin-origin": "browser request to /admin",
    "host": "Host refused",
    "unknown-path": "unknown path",
    "method": "method not allowed",
    "not-json": "body is not JSON",
}
"""Each reason's short label, for a table or a status bar."""

DOCTOR_AGENT = "streamscope-doctor"
"""The User-Agent ``streamscope doctor`` sends the proxy it finds on its port (with its
version after a ``/``): a refusal of it is doctor's check, no client's."""

RING = 200  # refusals kept, newest last
LOG_INTERVAL = 10.0
"""Seconds of one logging window."""
LOG_BURST = 20
"""Refused requests logged one line each per window; the rest are counted and said in
one line when the window ends."""

# The proxy's logger: its filter masks the configured keys in every line (app.py), and
# a child logger's records would pass by it.
log = logging.getLogger("streamscope.proxy")
FIELD_LIMIT = 200  # characters kept of a header value or a path


def key_suffix(key: str | None) -> str | None:
    """The last four characters of a key a client sent, masked like the app masks keys
    (``…abcd``); None without a key. A key of eight characters or fewer shows nothing of
    itself (four would be half of it)."""
    if not key:
        return None
    return mask(key) if len(key) > MIN_SECRET else mask("")


def _clip(value: str | None) -> str | None:
    if value is None:
        return None
    return short(value, FIELD_LIMIT + 1)


@dataclass(frozen=True, slots=True)
class Refusal:
    """One refused request. ``time`` is the wall clock (epoch seconds)."""

    time: float
    method: str
    path: str
    reason: Reason
    status: int
    message: str
    origin: str | None = None
    user_agent: str | None = None
    key_suffix: str | None = None
    host: str | None = None

    @property
    def label(self) -> str:
        return REASONS[self.reason]

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "label": self.label}


Listener = Callable[[Refusal], None]


class RefusalLog:
    """Counters by reason and the latest :data:`RING` refusals (all in memory)."""

    def __init__(
        self,
        size: int = RING,
        log_interval: float = LOG_INTERVAL,
        log_burst: int = LOG_BURST,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``clock`` (seconds, monotonic) times the logging windows; a test moves its own."""
        self._ring: deque[Refusal] = deque(maxlen=size)
        self.counts: Counter[str] = Counter()
        self.events: Signal[Refusal] = Signal("the refusal log")
        self.log_interval = log_interval
        self.log_burst = log_burst
        self.lines = 0  # log lines written for refusals (each one's and the summaries)
        self._window = -float("inf")  # when the current logging window began (monotonic)
        self._logged = 0  # refusals logged one by one in the current window
        self._unlogged: Counter[str] = Counter()  # counted, not yet said, by reason
        self._timer: asyncio.TimerHandle | None = None
        self._clock = clock

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def add(
        self,
        method: str,
        path: str,
        reason: Reason,
        status: int,
        message: str,
        *,
        origin: str | None = None,
        user_agent: str | None = None,
        key: str | None = None,
        host: str | None = None,
    ) -> Refusal:
        """Record a refusal; ``key`` is the key the client sent (only its masked suffix
        is kept)."""
        refusal = Refusal(
            time.time(),
            method[:16],
            _clip(path) or "",
            reason,
            status,
            message,
            _clip(origin),
            _clip(user_agent),
            key_suffix(key),
            _clip(host),
        )
        self._ring.append(refusal)
        self.counts[reason] += 1
        self.events.emit(refusal)
        return refusal

    def log(self, line: str, reason: str) -> None:
        """Log one refused request's ``line`` (a flood: see the module's docstring).
        On an event loop, what a window left unsaid is said when it ends; else with
        the first refusal after it, or :meth:`flush_log`."""
        now = self._clock()
        if now - self._window >= self.log_interval:
            self.flush_log()
            self._window, self._logged = now, 0
        if self._logged < self.log_burst:
            self._logged += 1
            self.lines += 1
            log.info("%s", line)
            return
        self._unlogged[reason] += 1
        if self._timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return
            delay = max(0.0, self._window + self.log_interval - now)
            self._timer = loop.call_later(delay, self.flush_log)

    def flush_log(self) -> None:
        """Say in one line the refusals the current window did not log one by one."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._unlogged:
            return
        total = sum(self._unlogged.values())
        seconds = self._clock() - self._window
        reasons = ", ".join(
            f"{REASONS.get(reason, reason)}: {n:,}" for reason, n in self._unlogged.most_common()
        )
        self._unlogged.clear()
        self.lines += 1
        log.warning(
            "refused %s more requests in the last %.0f s, not logged one by one (%s); "
            "GET /admin/refusals counts every refusal",
            f"{total:,}",
            seconds,
            reasons,
        )

    def recent(self, limit: int | None = None) -> list[Refusal]:
        """The latest refusals, newest first."""
        items = list(reversed(self._ring))
        return items if limit is None else items[:limit]

    def clear(self) -> None:
        self._ring.clear()
        self.counts.clear()

    def subscribe(
        self, listener: Listener, loop: asyncio.AbstractEventLoop | None = None
    ) -> Callable[[], None]:
        """Call ``listener`` with each new refusal (on ``loop`` when given); returns the
        unsubscribe."""
        return self.events.subscribe(listener, loop)

    def snapshot(self, limit: int = 100) -> dict[str, Any]:
        """The admin endpoint's answer: counts by reason and the latest refusals."""
        return {
            "total": self.total,
            "counts": {reason: self.counts.get(reason, 0) for reason in REASONS},
            "refusals": [r.to_json() for r in self.recent(limit)],
        }


__all__ = ["LOG_BURST", "LOG_INTERVAL", "REASONS", "Refusal", "RefusalLog", "key_suffix"]
