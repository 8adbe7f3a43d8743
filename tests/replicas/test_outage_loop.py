"""Replicas under load while their database goes away ten times:
every request is answered, every pool counts every request exactly, every flow is
listed; then SIGTERM, and the database itself holds every count and every flow (the
benchmark with figures: tests/bench/bench_outages.py).

The suite's server runs with ``synchronous_commit=off``: an immediate stop (a crash, to
the server) then loses commits it had acknowledged, which no replica can know of (they
made the counts short by a few per cent). Here commits are acknowledged once in the WAL
(fsync stays off: a server's crash loses nothing, the machine's could)."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import httpx

from tests.postgres import PostgresServer
from tests.proxy.pool_support import MODEL, keyed
from tests.replicas.support import HEADERS, replica, settles, write_config
from tests.upstream_server import UpstreamServer

OUTAGES = 10
DOWN = 0.3  # seconds the server stays down
UP = 0.3  # seconds it serves between two outages, once every replica says it is back


class _Server(PostgresServer):
    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1"
        options += " -c max_connections=200 -c fsync=off -c synchronous_commit=on"
        log = str(self.root / "server.log")
        self._cmd("pg_ctl", "-D", str(self.data), "-l", log, "-o", options, "-w", "start")


def _load(url: str, stop: threading.Event, results: list[bool]) -> None:
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    with httpx.Client(timeout=30) as client:
        while not stop.is_set():
            try:
                r = client.post(url + "/v1/chat/completions", json=body, headers=HEADERS)
                results.append(r.status_code == 200 and "[DONE]" in r.text)
            except httpx.HTTPError:
                results.append(False)


async def _in_database(url: str) -> tuple[int, int]:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        requests = await conn.fetchval("SELECT COALESCE(SUM(requests), 0) FROM pool_accounts")
        return int(requests), int(await conn.fetchval("SELECT COUNT(*) FROM flows"))
    finally:
        await conn.close()


def test_ten_outages_under_load_then_sigterm_lose_and_double_nothing(
    tmp_path: Path, upstream: UpstreamServer
) -> None:
    upstream.route("POST", "/v1/chat/completions", keyed({}))
    server = _Server()
    try:
        server.start()
        url = server.new_database()
        homes = tmp_path / "a", tmp_path / "b"
        for home in homes:
            write_config(home, url, upstream.url)
        with replica(homes[0], "A") as a, replica(homes[1], "B") as b:
            stop = threading.Event()
            results: list[bool] = []
            workers = [
                threading.Thread(target=_load, args=(r.url, stop, results)) for r in (a, b, a, b)
            ]
            for w in workers:
                w.start()
            try:
                for i in range(OUTAGES):
                    time.sleep(UP)
                    server.stop("fast" if i % 2 == 0 else "immediate")
                    time.sleep(DOWN)
                    server.start()
                    for r in (a, b):
                        settles(lambda r=r: r.health()["database"], "up", timeout=10.0)
                time.sleep(UP)
            finally:
                stop.set()
                for w in workers:
                    w.join(30)
            n = len(results)
            assert n > 100 and all(results), results.count(False)

            def counted() -> list[tuple[int, int]]:  # each pool's requests, each flow list
                return [
                    (sum(x["requests"] for x in r.accounts().values()), r.flow_total())
                    for r in (a, b)
                ]

            settles(counted, [(n, n), (n, n)], timeout=15.0)
            for r in (a, b):
                _, err = r.stop()  # SIGTERM: what waits is written
                assert r.proc.returncode == 0, err
                assert "Application shutdown failed" not in err and "died" not in err, err
                assert err.count("is unreachable") == OUTAGES, err
        assert asyncio.run(_in_database(url)) == (n, n)
    finally:
        server.close()
