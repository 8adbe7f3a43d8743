"""Idle connections and a slowloris against the proxy: a script, not
a test. ``.venv/bin/python -m tests.bench.bench_slowloris``

Starts the proxy in a child process on 127.0.0.1 (default limits: 64 KiB heads, 10 s to
send one, 1,000 connections), then holds 1,100 idle connections (sending nothing) and
200 slowloris connections (one header byte every 2 s) open, reopening any the proxy
closes, and meanwhile times normal requests (``GET /v1/models`` on a new connection
each): p50 and max over 20, one every 0.5 s, after the attack has been running 12 s (so
past the first deadline). Prints the figures.
"""

from __future__ import annotations

import asyncio
import resource
import statistics
import subprocess
import sys
import threading
import time

import httpx

KEY = "sk-local-bench0000000000000000000000000"
IDLE, SLOW, SAMPLES = 1100, 200, 20
SERVER = f"""
import asyncio, sys
from streamscope.config import Config
from streamscope.proxy.server import ProxyServer
async def main():
    config = Config.model_validate({{"proxy": {{"host": "127.0.0.1", "port": 0,
        "api_keys": ["{KEY}"]}}, "capture": {{"enabled": False}}}})
    server = ProxyServer(config)
    await server.start()
    print(server.port, flush=True)
    await server.wait()
asyncio.run(main())
"""


class Attack:
    def __init__(self, port: int):
        self.port = port
        self.stop = False
        self.reopened = 0
        self.open_now = 0

    async def _hold(self, slow: bool) -> None:
        first = True
        while not self.stop:  # noqa: ASYNC110 (a flag set from another thread)
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
            except OSError:
                await asyncio.sleep(0.5)
                continue
            self.open_now += 1
            if not first:
                self.reopened += 1
            first = False
            try:
                line = b"GET /v1/models HTTP/1.1\r\nhost: 127.0.0.1\r\nx-a: " + b"a" * 100
                for byte in line if slow else []:
                    writer.write(bytes([byte]))
                    await writer.drain()
                    await asyncio.sleep(2)
                    if self.stop:
                        break
                if slow:  # a byte now and then, until a write fails (closed)
                    while not self.stop:
                        await asyncio.sleep(2)
                        writer.write(b"a")
                        await writer.drain()
                else:  # nothing at all, until the proxy closes it
                    await reader.read(1)
            except (ConnectionError, OSError):
                pass
            finally:
                self.open_now -= 1
                writer.close()

    async def run(self) -> None:
        tasks = [asyncio.create_task(self._hold(False)) for _ in range(IDLE)]
        tasks += [asyncio.create_task(self._hold(True)) for _ in range(SLOW)]
        while not self.stop:  # noqa: ASYNC110 (a flag set from another thread)
            await asyncio.sleep(0.2)
        await asyncio.gather(*tasks, return_exceptions=True)


def main() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # the child inherits it
    child = subprocess.Popen(
        [sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True, cwd="."
    )
    try:
        assert child.stdout is not None
        port = int(child.stdout.readline())
        url = f"http://127.0.0.1:{port}/v1/models"
        attack = Attack(port)
        thread = threading.Thread(target=lambda: asyncio.run(attack.run()), daemon=True)
        thread.start()
        time.sleep(12)
        times, statuses = [], []
        for _ in range(SAMPLES):
            with httpx.Client(timeout=10, trust_env=False) as client:
                start = time.perf_counter()
                r = client.get(url, headers={"authorization": f"Bearer {KEY}"})
                times.append((time.perf_counter() - start) * 1000)
                statuses.append(r.status_code)
            time.sleep(0.5)
        attack.stop = True
        thread.join(10)
        print(
            f"idle {IDLE} + slowloris {SLOW} (fd limit {hard}); reopened by the attacker:"
            f" {attack.reopened}"
        )
        print(f"normal requests: {SAMPLES}, statuses {sorted(set(statuses))}")
        print(f"p50 {statistics.median(times):.1f} ms, max {max(times):.1f} ms")
    finally:
        child.terminate()
        child.wait(10)


if __name__ == "__main__":
    main()
