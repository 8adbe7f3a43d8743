"""``streamscope lint`` of a HAR file (:func:`streamscope.cli.lint.run_har`), run as a real
process: every entry linted with the lint options, one line and exit 2 for a file that is
no HAR, and no "None" where an entry lacks a method or a URL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import FIXTURES
from tests.test_cli import cli

# -- lint of a HAR file ---------------------------------------------------------------------

GOOD_SSE = FIXTURES / "openai-chat" / "oai-py_text_usage_done.sse"


def _har_file(tmp_path: Path, *streams: bytes) -> Path:
    from streamscope.capture.har import to_har
    from streamscope.capture.sse import import_sse

    flows = [import_sse(data) for data in streams]
    for i, flow in enumerate(flows):
        flow.id = f"flow-{i}"
    path = tmp_path / "flows.har"
    path.write_text(json.dumps(to_har(flows)))
    return path


def test_lint_of_a_har_file_lints_every_entry(tmp_path: Path) -> None:
    good = GOOD_SSE.read_bytes()
    broken = good[:600]  # cut inside a frame's JSON
    path = _har_file(tmp_path, good, broken)
    proc = cli("lint", str(path))
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout.decode()
    # Two flows, each a client and an upstream entry.
    for header in (
        "entry 1 (client leg of flow flow-0)",
        "entry 2 (upstream leg of flow flow-0)",
        "entry 3 (client leg of flow flow-1)",
        "entry 4 (upstream leg of flow flow-1)",
    ):
        assert header in out
    first, broken_part = out.split("entry 3 ")
    assert "0 errors" in first and "framing.invalid-json" not in first
    assert "framing.invalid-json" in broken_part
    causes = [ln for ln in broken_part.splitlines() if "• framing.invalid-json" in ln]
    assert causes  # once per leg that carries it (the client leg and the upstream leg)
    cause = causes[0]
    assert "would fail in" in cause and "openai-python (Chat Completions)" in cause

    as_json = cli("lint", "--json", str(path))
    assert as_json.returncode == 1
    entries = json.loads(as_json.stdout)["entries"]
    assert [(e["flow_id"], e["leg"], e["report"]["errors"] > 0) for e in entries] == [
        ("flow-0", "client", False),
        ("flow-0", "upstream", False),
        ("flow-1", "client", True),
        ("flow-1", "upstream", True),
    ]
    assert entries[2]["report"]["protocol"] == "openai-chat"


def test_lint_of_a_har_file_takes_the_lint_options(tmp_path: Path) -> None:
    good = GOOD_SSE.read_bytes()
    assert cli("lint", str(_har_file(tmp_path, good))).returncode == 0
    broken = _har_file(tmp_path, good[:600])
    # The Anthropic SDKs (the old shared profile's name: both) do not speak this stream's
    # protocol (every client that does is broken by the cut, openai-node too:
    # tests/realclients): none of the findings is shown.
    proc = cli("lint", "--client", "anthropic-sdk", "--json", str(broken))
    assert proc.returncode == 0, proc.stdout
    (entry, _) = json.loads(proc.stdout)["entries"]
    assert list(entry["report"]["verdicts"]) == ["anthropic-python", "anthropic-node"]
    assert cli("lint", "--client", "openai-python", str(broken)).returncode == 1
    # --protocol is the stream's, as lint takes it: read as Anthropic, this one is wrong.
    as_anthropic = cli("lint", "--protocol", "anthropic", "--json", str(broken))
    (entry, _) = json.loads(as_anthropic.stdout)["entries"]
    assert entry["report"]["protocol"] == "anthropic"
    assert "anthropic.missing-event-line" in {f["rule"] for f in entry["report"]["findings"]}
    assert cli("lint", "--protocol", "bedrock", str(broken)).returncode == 2


def test_lint_of_a_devtools_har_lints_the_streams_and_skips_the_rest(tmp_path: Path) -> None:
    from tests.capture.test_har import devtools_har

    path = tmp_path / "devtools.har"
    path.write_text(json.dumps(devtools_har()))
    proc = cli("lint", "--json", str(path))
    # The streams are fine; the models list is a body nobody asked to stream: no finding.
    assert proc.returncode == 0, proc.stdout
    entries = json.loads(proc.stdout)["entries"]
    assert len(entries) == len(devtools_har()["log"]["entries"])
    assert all(e["leg"] is None and e["url"].startswith("http") for e in entries)
    linted = {e["url"]: e["report"]["protocol"] if e["report"] else None for e in entries}
    assert linted == {
        "https://api.openai.com/v1/chat/completions": "openai-chat",
        "https://api.openai.com/v1/models?limit=2": None,
        "https://api.anthropic.com/v1/messages": "anthropic",
    }
    assert "not linted: a whole body" in cli("lint", str(path)).stdout.decode()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, b"cannot read"),
        (b"not json at all", b"not a HAR file"),
        (b'{"log": {"entries": 3}}', b"not a HAR file"),
    ],
)
def test_lint_of_an_unreadable_har_is_one_line_and_exit_2(
    tmp_path: Path, content: bytes | None, message: bytes
) -> None:
    path = tmp_path / "bad.har"
    if content is not None:
        path.write_bytes(content)
    proc = cli("lint", str(path))
    assert proc.returncode == 2 and message in proc.stderr
    assert proc.stderr.count(b"\n") == 1 and b"Traceback" not in proc.stderr
    assert proc.stdout == b""


def test_lint_of_a_har_flags_a_body_where_a_stream_was_asked_for(tmp_path: Path) -> None:
    from tests.capture.test_har import devtools_har

    har = devtools_har()
    models = har["log"]["entries"][1]  # a JSON body: fine for GET /v1/models …
    ask = {"model": "gpt-4o", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    models["request"]["postData"] = {"mimeType": "application/json", "text": json.dumps(ask)}
    path = tmp_path / "asked.har"
    path.write_text(json.dumps(har))
    proc = cli("lint", "--json", str(path))
    # … but not as the answer to a request for a stream.
    assert proc.returncode == 1
    entry = json.loads(proc.stdout)["entries"][1]
    assert "framing.non-sse-body" in {f["rule"] for f in entry["report"]["findings"]}


# -- no "None" in any output, whatever goes wrong ----------------------------------------


def test_lint_of_a_har_entry_without_method_or_url_prints_no_none(tmp_path: Path) -> None:
    stream = 'data: {"choices":[]}\n\n'
    entry = {
        "startedDateTime": "2024-01-01T00:00:00Z",
        "time": 1,
        "request": {},
        "response": {
            "status": 200,
            "headers": [{"name": "content-type", "value": "text/event-stream"}],
            "content": {"mimeType": "text/event-stream", "text": stream},
        },
    }
    har = tmp_path / "odd.har"
    har.write_text(json.dumps({"log": {"version": "1.2", "entries": [entry]}}))
    proc = cli("lint", str(har))
    out = proc.stdout.decode()
    assert out.startswith("entry 1: (no method) (no URL)")
    assert "None None" not in out
