"""The store the core owns: :class:`Conversations`, the proxy's recent Responses answers.

In this process's memory (:class:`~streamscope.conversation.answers.MemoryAnswers`) and,
when replicas share a PostgreSQL database (``[storage]``), in it too
(:mod:`~streamscope.conversation.pg_rows`), so that the next step of a conversation may
reach any replica. A look-up asks memory first and the database for the rest; keeping
an answer writes memory at once and the database within :data:`WRITE_BUDGET` seconds
before the client's last frame goes on (the write itself goes on after that, if it
must): a client that sends its next step the moment it has the answer then finds it on
any replica. A database that is away costs the shared half only (said once in the log,
and in the error for an id that only it could have resolved).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from streamscope.config.model import ConversationConfig
from streamscope.conversation.answers import (
    MIB,
    Answer,
    Found,
    Limits,
    Mask,
    MemoryAnswers,
    Packed,
    pack,
)
from streamscope.storage.errors import StorageError

if TYPE_CHECKING:  # (the driver is loaded only for a shared database)
    from streamscope.storage.database import Database

log = logging.getLogger("streamscope.proxy")  # (its records pass the key-masking filter)
WRITE_BUDGET = 0.25  # seconds the client's last frame waits for the shared write, at most


def limits_for(config: ConversationConfig) -> Limits:
    return Limits(config.max_answers, config.max_hours * 3600.0, int(config.max_megabytes * MIB))


class Conversations:
    """See the module docstring. ``mask``: what each item's JSON passes through before
    it is kept (the redactor's ``same_length``: a key the client never saw unmasked is
    never kept unmasked either)."""

    def __init__(
        self,
        limits: Limits,
        mask: Mask,
        database: Database | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.limits = limits
        self.memory = MemoryAnswers(limits, mask, clock)
        self.database = database
        self._mask = mask
        self._clock = clock
        self._writes: set[asyncio.Future[list[str]]] = set()
        self._down = False  # the database's failure is said once, until it works again

    async def find(self, response_ids: Sequence[str], item_ids: Sequence[str]) -> Found:
        found = self.memory.find(response_ids, item_ids)
        answers = [r for r in response_ids if r not in found.answers]
        items = [i for i in item_ids if i not in found.items]
        database = self.database
        if database is None or not (answers or items):
            return found
        from streamscope.conversation import pg_rows

        limits, now = self.limits, self._clock()
        try:
            shared = await database.arun(
                lambda conn: pg_rows.find(conn, answers, items, limits, now)
            )
        except StorageError as exc:
            self._failed(exc)
            why = f"the shared database could not be asked ({exc})"
            for key in (*answers, *items):
                found.gone.setdefault(key, why)
            return found
        self._worked()
        for key in (*shared.answers, *shared.items):
            found.gone.pop(key, None)  # (dropped here, kept there: another replica's)
        found.merge(shared)
        return found

    async def keep(self, answer: Answer) -> None:
        """Keep ``answer`` here, and in the shared database within the write budget."""
        packed = pack(answer, self._mask)
        self.memory.keep_packed(packed)
        if self.database is None:
            return
        write = asyncio.ensure_future(self._write(self.database, packed))
        self._writes.add(write)
        write.add_done_callback(self._writes.discard)
        await asyncio.wait({write}, timeout=WRITE_BUDGET)

    async def _write(self, database: Database, packed: Packed) -> list[str]:
        from streamscope.conversation import pg_rows

        limits, replica, now = self.limits, database.replica, self._clock()
        try:
            dropped = await database.arun(
                lambda conn: pg_rows.insert(conn, packed, limits, replica, now)
            )
        except StorageError as exc:
            self._failed(exc)
            return []
        except Exception:  # (a write no one awaits: said here, or never)
            log.exception("conversation state: keeping answer %s in the database failed", packed.id)
            return []
        self._worked()
        return dropped

    def _failed(self, exc: StorageError) -> None:
        if not self._down:
            self._down = True
            log.warning("conversation state: the shared database failed (%s); memory only", exc)

    def _worked(self) -> None:
        if self._down:
            self._down = False
            log.warning("conversation state: the shared database works again")

    async def aclose(self) -> None:
        """Wait (a few seconds at most) for the shared writes under way."""
        if self._writes:
            await asyncio.wait(set(self._writes), timeout=5)


__all__ = ["WRITE_BUDGET", "Conversations", "limits_for"]
