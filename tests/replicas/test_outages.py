"""Replicas under failure: one killed mid-stream while the other serves on; the database
restarted under load while both serve, losing nothing and counting nothing twice."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import httpx

from tests.postgres import PostgresServer, running
from tests.proxy.pool_support import MODEL, keyed
from tests.replicas.support import HEADERS, eventually, replica, settles, write_config
from tests.upstream_server import UpstreamServer, fast_stream_script, fast_stream_text

SLOW = 40  # deltas of the slow stream, 50 ms apart


def _stream(url: str, got: list[bytes], first: threading.Event) -> None:
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    try:
        with httpx.stream(
            "POST", url + "/v1/chat/completions", json=body, headers=HEADERS, timeout=30
        ) as r:
            for chunk in r.iter_bytes():
                got.append(chunk)
                first.set()
    except httpx.HTTPError:
        got.append(b"<broken>")
    finally:
        first.set()


def test_a_replica_killed_mid_stream_leaves_the_other_serving(
    tmp_path: Path, pg_url: str, upstream: UpstreamServer
) -> None:
    upstream.route("POST", "/v1/chat/completions", lambda _r: fast_stream_script(SLOW, pace=0.05))
    homes = tmp_path / "a", tmp_path / "b"
    for home in homes:
        write_config(home, pg_url, upstream.url)
    with replica(homes[1], "B") as b:
        with replica(homes[0], "A") as a:
            on_a: list[bytes] = []
            on_b: list[bytes] = []
            a_first, b_first = threading.Event(), threading.Event()
            threads = [
                threading.Thread(target=_stream, args=(a.url, on_a, a_first)),
                threading.Thread(target=_stream, args=(b.url, on_b, b_first)),
            ]
            for t in threads:
                t.start()
            assert a_first.wait(10) and b_first.wait(10)
            a.proc.send_signal(signal.SIGKILL)  # mid-stream, no chance to shut down
            for t in threads:
                t.join(30)
            assert on_a[-1] == b"<broken>" or b"[DONE]" not in b"".join(on_a)
            text = b"".join(on_b).decode()
            assert "data: [DONE]" in text and all(f"t{i} " in text for i in range(SLOW))
        for _ in range(3):  # B serves on, its database and pool unharmed
            assert fast_stream_text(SLOW).split()[-1] in b.chat().text
        assert len(eventually(lambda: len(b.flow_ids()) >= 4 and b.flow_ids(), 3.0)) >= 4


def _load(url: str, stop: threading.Event, results: list[tuple[int, str]]) -> None:
    body = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}], "stream": True}
    with httpx.Client(timeout=30) as client:
        while not stop.is_set():
            r = client.post(url + "/v1/chat/completions", json=body, headers=HEADERS)
            results.append((r.status_code, r.text))


def test_the_database_restarted_under_load_loses_nothing(
    tmp_path: Path, upstream: UpstreamServer
) -> None:
    upstream.route("POST", "/v1/chat/completions", keyed({}))
    server: PostgresServer
    with running() as server:
        url = server.new_database()
        homes = tmp_path / "a", tmp_path / "b"
        for home in homes:
            write_config(home, url, upstream.url)
        with replica(homes[0], "A") as a, replica(homes[1], "B") as b:
            stop = threading.Event()
            results: list[tuple[int, str]] = []
            workers = [threading.Thread(target=_load, args=(r.url, stop, results)) for r in (a, b)]
            for w in workers:
                w.start()
            time.sleep(1.0)
            served_before = len(results)
            server.stop()
            for r in (a, b):  # said to a load balancer, which keeps sending
                settles(lambda r=r: r.health()["database"], "unreachable", timeout=3.0)
            time.sleep(1.0)
            server.start()
            for r in (a, b):
                settles(lambda r=r: r.health()["database"], "up", timeout=5.0)
            time.sleep(0.5)
            stop.set()
            for w in workers:
                w.join(30)
            assert served_before > 0 and len(results) > served_before + 10
            assert all(status == 200 and "[DONE]" in text for status, text in results)

            def counted() -> tuple[int, int, int, int]:  # requests by the pools; flows
                pools = [sum(x["requests"] for x in r.accounts().values()) for r in (a, b)]
                return (*pools, a.flow_total(), b.flow_total())

            n = len(results)
            settles(counted, (n, n, n, n), timeout=10.0)
        for r in (a, b):
            err = r.logs[1]
            assert err.count("is unreachable") == 1, err
            assert err.count("is reachable again") == 1, err
