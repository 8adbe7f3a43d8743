"""doctor.storage: a database URL's ``?password=`` is never printed,
reachable or not; the userinfo's never was."""

from __future__ import annotations

from streamscope.config import parse_config
from streamscope.doctor.storage import check_storage
from tests.postgres import free_port

PASSWORD = "doctor-pw-Quartz-9"


async def test_an_unreachable_database_is_said_without_its_query_password() -> None:
    url = f"postgresql://ss@127.0.0.1:{free_port()}/ss?password={PASSWORD}"
    check = await check_storage(parse_config(f'[storage]\nurl = "{url}"\n'), 2)
    assert check.status == "fail" and "cannot reach" in check.detail
    assert PASSWORD not in check.detail + check.fix and "password=***" in check.detail


async def test_a_reachable_database_is_named_without_its_query_password(pg_url: str) -> None:
    url = f"{pg_url}?password={PASSWORD}"  # (the test server trusts loopback)
    check = await check_storage(parse_config(f'[storage]\nurl = "{url}"\n'), 5)
    assert check.status == "ok" and "no tables yet" in check.detail
    assert PASSWORD not in check.detail and "password=***" in check.detail
