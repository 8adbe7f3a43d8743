"""The pool's backend seam (pool/backend.py): what the pool tells a backend and when
(attach as it is made, the stored state taken by fingerprint, a note per change with its
status intent, start and close), and the memory backend that keeps nothing."""

from __future__ import annotations

from streamscope.pool.backend import MemoryBackend, PoolView, Stored
from streamscope.pool.merge import Kind
from streamscope.pool.pool import AccountPool
from streamscope.pool.rules import NETWORK_STATUS, classify
from streamscope.pool.state import AccountState, Attempt
from streamscope.pool.store import fingerprint

from .helpers import Clock, key, make_config


class Journal:
    """A backend that writes down what the pool tells it, and holds one stored state."""

    def __init__(self, stored: Stored) -> None:
        self.stored = stored
        self.calls: list[tuple[str, ...]] = []
        self.view: PoolView | None = None

    def attach(self, view: PoolView) -> Stored:
        self.view = view
        self.calls.append(("attach",))
        return self.stored

    async def start(self) -> None:
        self.calls.append(("start",))

    def note(self, upstream: str, account: str, intent: Kind | None) -> None:
        self.calls.append(("note", upstream, account, str(intent)))

    async def close(self) -> None:
        self.calls.append(("close",))


async def test_the_pool_tells_its_backend_each_change_with_its_intent() -> None:
    clock = Clock()
    cooling = AccountState("cooling", clock() + 50, "why", "exhausted")
    stale = AccountState("disabled", None, "old key", "invalid_credential")
    journal = Journal(
        {
            ("oa", "account1"): (fingerprint(key(1)), cooling),
            ("oa", "account2"): ("another key's", stale),
        }
    )
    pool = AccountPool(make_config(3), journal, clock=clock)
    assert journal.calls == [("attach",)] and journal.view is pool
    # the stored state is taken where the key is the same, not where it changed
    assert pool.state("oa", "account1").status == "cooling"
    assert pool.state("oa", "account2").status == "active"
    await pool.start()
    chosen = pool.select("oa")
    assert chosen is not None and chosen.name == "account2"
    verdict = classify(pool.rules, 401, b"", {}, clock())
    pool.record(
        Attempt("r", "oa", "account2", "invalid_credential", "disable", 401, clock()), verdict
    )
    pool.disable("oa", "account3")
    pool.enable("oa", "account3")
    network = classify(pool.rules, NETWORK_STATUS)
    pool.record(Attempt("r", "oa", None, "network", "next", 0, clock()), network)  # no account
    await pool.close()
    assert journal.calls[1:] == [
        ("start",),
        ("note", "oa", "account2", "None"),  # picked
        ("note", "oa", "account2", "off"),  # a rule switched it off
        ("note", "oa", "account3", "user_off"),
        ("note", "oa", "account3", "on"),
        ("close",),
    ]


async def test_the_memory_backend_keeps_nothing_between_pools() -> None:
    backend = MemoryBackend()
    pool = AccountPool(make_config(2), backend)
    pool.disable("oa", "account1")
    await pool.close()
    assert backend.attach(pool) == {}
    again = AccountPool(make_config(2), MemoryBackend())
    assert again.state("oa", "account1").status == "active"
