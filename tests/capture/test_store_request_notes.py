"""What request translation dropped or changed, kept with a flow by the store
(app/streamscope/capture/store.py) in its SQLite file: the notes the proxy hands over
come back from the file after the store is closed and opened again, masked as every
stored text is, counted in the flow's summary; an imported flow's notes are masked the
same way. (The same on PostgreSQL: test_pg_rows_request_notes.py.)"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from streamscope.capture.info import FlowInfo
from streamscope.capture.store import FlowStore
from streamscope.model.request import RequestNote
from streamscope.redact import Redactor, mask
from tests.capture.test_store_durability import recorder

SECRET = "sk-upstream-secret-0123456789abcdef"
NOTES = [
    RequestNote("tools[0]", "dropped", "web_search_20250305 tool 'web_search': no place"),
    RequestNote("container", "dropped", "an Anthropic field: OpenAI Chat has no place for it"),
    RequestNote("tool call toolu_1", "changed", "it has no result", "an error result"),
    RequestNote("tools[1]", "dropped", f"a tool named '{SECRET}': no place"),
]


def _masked(note: RequestNote) -> RequestNote:
    return replace(note, why=note.why.replace(SECRET, mask(SECRET)))


def test_the_notes_come_back_from_the_file_masked_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "flows.sqlite3"
    store = FlowStore(path, Redactor([SECRET]))
    try:
        store.submit(recorder("f1"), FlowInfo(model="m", request_notes=list(NOTES)))
        store.submit(recorder("f2"), FlowInfo(model="m"))  # a route with nothing to say
        store.flush()
    finally:
        store.close()
    reopened = FlowStore(path, Redactor([SECRET]))
    try:
        flow = reopened.get("f1")
        assert flow is not None
        assert flow.info.request_notes == [_masked(n) for n in NOTES]
        assert SECRET not in repr(flow.to_json())
        summary = reopened.summary("f1")
        assert summary is not None and summary.request_changes == len(NOTES)
        plain = reopened.get("f2")
        assert plain is not None and plain.info.request_notes == []
        assert (reopened.summary("f2") or summary).request_changes == 0
    finally:
        reopened.close()
    assert SECRET.encode() not in path.read_bytes()


def test_an_imported_flows_notes_are_masked_too(tmp_path: Path) -> None:
    store = FlowStore(None, Redactor([SECRET]))
    try:
        store.submit(recorder("f1"), FlowInfo(request_notes=list(NOTES)))
        store.flush()
        flow = store.get("f1")
        assert flow is not None
        # As a file from elsewhere would carry them: in clear.
        flow.info.request_notes = list(NOTES)
        (summary,) = store.add([flow])
        assert summary.id != "f1" and summary.request_changes == len(NOTES)
        imported = store.get(summary.id)
        assert imported is not None and imported.info.imported
        assert imported.info.request_notes == [_masked(n) for n in NOTES]
    finally:
        store.close()
