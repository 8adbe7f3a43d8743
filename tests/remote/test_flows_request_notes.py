"""A followed proxy's request notes (remote/flows.py), through a real proxy translating
an Anthropic client's request for an OpenAI Chat upstream: the window attached to it
reads the flow with what the translation dropped, and its list counts them."""

from __future__ import annotations

from pathlib import Path

from streamscope.remote import RemoteFlows
from tests.proxy.request_notes_support import BODY, DROPPED, KEY, translating


async def test_the_remote_flow_says_what_its_translation_dropped(tmp_path: Path) -> None:
    with translating(tmp_path / "flows.sqlite3") as setup:
        r = setup.post(BODY)
        assert r.status_code == 200, r.text
        flow_id = r.headers["x-request-id"]
        remote = RemoteFlows(setup.proxy.url, KEY)
        try:
            flow = await remote.get(flow_id)
            listed, _ = await remote.summaries()
        finally:
            await remote.aclose()
        local = setup.admin(f"/admin/flows/{flow_id}")["request_notes"]
    assert flow is not None
    assert [n.to_json() for n in flow.info.request_notes] == local
    assert set(DROPPED) <= {n.field for n in flow.info.request_notes if n.action == "dropped"}
    (summary,) = [s for s in listed if s.id == flow_id]
    assert summary.request_changes == len(local)
