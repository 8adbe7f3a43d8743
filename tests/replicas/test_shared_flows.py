"""Two ``serve`` replicas on one PostgreSQL share the flow store: a flow one served is
listed and readable from the other, and the other's live feed tells it."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.replicas.support import ADMIN_HEADERS, FeedFollower, eventually, replica, two_homes
from tests.upstream_server import UpstreamServer


def test_a_flow_one_replica_served_the_other_lists_reads_and_tells(
    tmp_path: Path, pg_url: str, upstream: UpstreamServer
) -> None:
    home_a, home_b = two_homes(tmp_path, pg_url, upstream)
    with replica(home_a, "A") as a, replica(home_b, "B") as b:
        feed = FeedFollower(b.url, "flow.added", lambda _data: True).start()
        response = a.chat()
        assert response.status_code == 200
        (flow_id,) = eventually(a.flow_ids, timeout=3.0)
        assert eventually(lambda: flow_id in b.flow_ids(), timeout=2.0)
        feed.join(3)
        assert [t.get("id") for t in feed.told] == [flow_id]
        assert b.admin("GET", f"/admin/flows/{flow_id}")["id"] == flow_id
        raw = httpx.get(
            f"{b.url}/admin/flows/{flow_id}/client.sse", headers=ADMIN_HEADERS, timeout=10
        )
        assert raw.content == response.content  # the exact bytes A sent its client
