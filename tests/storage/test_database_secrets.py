"""storage.database: the outage line and the start error name the database without a
password given as ``?password=``."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from streamscope.storage.database import Database, StorageUnavailable
from tests.postgres import free_port

PASSWORD = "outage-pw-Zebra-42"


def test_a_start_error_hides_a_query_password() -> None:
    db = Database(f"postgresql://app@127.0.0.1:{free_port()}/ss?password={PASSWORD}", timeout=2)
    with pytest.raises(StorageUnavailable) as caught:
        db.open()
    assert "cannot reach the database" in str(caught.value)
    assert PASSWORD not in str(caught.value) and "password=***" in str(caught.value)


def test_the_outage_line_hides_a_query_password(
    postgres_server: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from tests.postgres import running

    with running() as server:  # (its own server: this one goes down)
        db = Database(f"{server.new_database()}?password={PASSWORD}", timeout=2)
        db.open()
        try:
            caplog.set_level(logging.WARNING, "streamscope.storage")
            server.stop()
            with pytest.raises(StorageUnavailable):
                db.run(lambda c: c.fetchval("SELECT 1"))
        finally:
            db.close()
    said = [r.getMessage() for r in caplog.records if "unreachable" in r.getMessage()]
    assert len(said) == 1, caplog.text
    assert PASSWORD not in said[0] and "password=***" in said[0]
