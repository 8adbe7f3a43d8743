"""The replicas' tests each get a fresh database on the session's PostgreSQL server, and
a fake upstream answering every account (``tests.proxy.pool_support``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.upstream_server import UpstreamServer, run_in_thread


@pytest.fixture
def upstream() -> Iterator[UpstreamServer]:
    with run_in_thread() as up:
        yield up
