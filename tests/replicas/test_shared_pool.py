"""Two ``serve`` replicas on one PostgreSQL share the account pool: a switch-off by one is
skipped by the other within a second, a rule's cooldown is one cooldown, the counters add."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.proxy.pool_support import error_script, keyed, order
from tests.replicas.support import FeedFollower, eventually, replica, two_homes
from tests.upstream_server import UpstreamServer


def test_an_account_one_replica_disables_the_other_skips_within_a_second(
    tmp_path: Path, pg_url: str, upstream: UpstreamServer
) -> None:
    home_a, home_b = two_homes(tmp_path, pg_url, upstream)
    with replica(home_a, "A") as a, replica(home_b, "B") as b:
        a.admin("POST", "/admin/pool/up/a/disable")
        started = time.monotonic()
        eventually(lambda: b.accounts()["a"]["status"] == "disabled", timeout=1.0)
        assert time.monotonic() - started < 1.0
        asked = len(order(upstream))
        for _ in range(4):
            assert b.chat().status_code == 200
        assert order(upstream)[asked:] == ["b"] * 4  # B never tried the disabled account
        b.admin("POST", "/admin/pool/up/a/enable")
        eventually(lambda: a.accounts()["a"]["status"] == "active", timeout=1.0)
        assert a.accounts()["a"]["reason"] == b.accounts()["a"]["reason"]


def test_a_rule_cooldown_is_one_cooldown_for_every_replica(
    tmp_path: Path, pg_url: str, upstream: UpstreamServer
) -> None:
    home_a, home_b = two_homes(tmp_path, pg_url, upstream)
    quota = error_script(429, "quota", **{"Retry-After": "3600"})
    upstream.route("POST", "/v1/chat/completions", keyed({"a": quota}))  # (replaces it)
    with replica(home_a, "A") as a, replica(home_b, "B") as b:
        while "a" not in order(upstream):  # until A has tried a (the strategy may pick b)
            assert a.chat().status_code == 200
        cooling = eventually(lambda: b.accounts()["a"]["status"] == "cooling" and b.accounts())
        assert cooling["a"]["until"] == a.accounts()["a"]["until"]
        for _ in range(3):
            assert b.chat().status_code == 200
        assert order(upstream).count("a") == 1  # one 429: B never asked a
        failures = eventually(lambda: b.accounts()["a"]["failures"])
        assert sum(failures.values()) == 1 and failures == a.accounts()["a"]["failures"]


def test_the_counters_add_up_across_replicas(
    tmp_path: Path, pg_url: str, upstream: UpstreamServer
) -> None:
    home_a, home_b = two_homes(tmp_path, pg_url, upstream)
    with replica(home_a, "A") as a, replica(home_b, "B") as b:
        for _ in range(3):
            assert a.chat().status_code == 200
        for _ in range(5):
            assert b.chat().status_code == 200

        def totals(r: object) -> tuple[int, int]:
            accounts = r.accounts()  # type: ignore[attr-defined]
            return (
                sum(x["requests"] for x in accounts.values()),
                sum(x["successes"] for x in accounts.values()),
            )

        eventually(lambda: totals(a) == (8, 8) and totals(b) == (8, 8), timeout=3.0)


def test_the_other_replicas_live_feed_tells_the_switch_off(
    tmp_path: Path, pg_url: str, upstream: UpstreamServer
) -> None:
    """A window attached to B follows B's /admin/events: a Disable made on A reaches it
    as B's own pool.account event, within a second."""
    home_a, home_b = two_homes(tmp_path, pg_url, upstream)
    with replica(home_a, "A") as a, replica(home_b, "B") as b:

        def disabled(data: Any) -> bool:
            return bool((data.get("state") or {}).get("status") == "disabled")

        feed = FeedFollower(b.url, "pool.account", disabled).start()
        started = time.monotonic()
        a.admin("POST", "/admin/pool/up/a/disable")
        feed.join(3)
        assert time.monotonic() - started < 1.0
        assert [(t["upstream"], t["account"]) for t in feed.told] == [("up", "a")]
