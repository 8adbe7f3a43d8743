"""``streamscope lint``: exit status 0 / 1 / 2, human and JSON output, ``--client``, stdin."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from streamscope.cli import main
from tests.lint.streams import BROKEN
from tests.support import FIXTURES

CLEAN = FIXTURES / "openai-chat" / "oai-py_text_usage_done.sse"
NO_ITEM_ID = BROKEN / "responses-no-item-id.sse"
COPILOT = FIXTURES / "responses" / "vercel_github-copilot_item-id-rotation.jsonl"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["lint", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_clean_stream_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, str(CLEAN))
    assert code == 0 and err == ""
    assert "openai-chat: 0 findings, 0 errors" in out
    # one line for every client of the protocol, not one per client
    (ok,) = [line for line in out.splitlines() if "ok: nothing" in line]
    assert ok.startswith("  ok: nothing in this stream is known to break ")
    assert "openai-python (Chat Completions)" in ok and "Cherry Studio (OpenAI type" in ok


def test_broken_stream_exits_1_with_findings_and_verdicts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, str(NO_ITEM_ID))
    assert code == 1
    first = out.splitlines()[0]
    assert first.startswith("error   responses.missing-item-id  frame 4: ")
    # measured in the AI SDK (tests/realclients): a schema error part, not a silent drop
    assert "Cherry Studio (OpenAI-Response type, @ai-sdk/openai) (error)" in first
    assert "would fail in Cherry Studio (OpenAI-Response type, @ai-sdk/openai) because" in out


def test_warnings_only_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, str(BROKEN / "chat-missing-done.sse"))
    assert code == 0 and "warning chat.missing-done  stream: " in out


@pytest.mark.parametrize(
    "args",
    [
        ["/nonexistent/stream.sse"],
        ["--protocol", "grpc", str(CLEAN)],
        ["--client", "curl", str(CLEAN)],
        ["-"],  # stdin: an SSE stream of no known protocol
    ],
)
def test_unusable_input_exits_2_with_one_line(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'data: {"x":1}\n\n')))
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("streamscope: error: ")


def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--json", str(COPILOT))
    report = json.loads(out)
    assert code == 1
    assert report["protocol"] == "responses" and report["errors"] == 4
    rules = {f["rule"] for f in report["findings"]}
    assert rules == {"responses.response-id-changed", "responses.item-id-changed"}
    finding = report["findings"][0]
    assert set(finding) == {
        *("rule", "severity", "frame", "message", "explanation", "breaks", "fix"),
        *("shows", "excused"),  # what clients show of an upstream's error; not its fault
        "kind",  # wire: a defect of the stream's form (the provider's doing: "outcomes")
    }
    assert report["outcomes"] == [] and report["happened"] is None
    assert finding["breaks"]["openai-python-responses"]["effect"] == "error"
    assert set(report["verdicts"]) == {
        *("cherry-responses", "openai-python-responses", "openai-node", "codex", "strict")
    }


def test_client_filters_findings_and_verdicts(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--json", "--client", "cherry-responses", str(COPILOT))
    report = json.loads(out)
    assert code == 1
    assert {f["rule"] for f in report["findings"]} == {"responses.item-id-changed"}
    assert list(report["verdicts"]) == ["cherry-responses"]
    # the old shared profile `cherry`: its members that speak the stream's protocol
    code, out, _ = run(capsys, "--json", "--client", "cherry", str(COPILOT))
    assert code == 1 and json.loads(out)["verdicts"] == report["verdicts"]
    assert json.loads(out)["findings"] == report["findings"]
    # a strict SSE client is broken by nothing here: exit 0 although other clients break.
    code, out, _ = run(capsys, "--client", "strict", str(COPILOT))
    assert code == 0
    assert out.strip().splitlines()[-1] == (
        "  ok: nothing in this stream is known to break a strict SSE client"
    )


def test_client_of_another_protocol(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--client", "anthropic-node", str(NO_ITEM_ID))
    assert code == 0 and "n/a: @anthropic-ai/sdk does not speak responses" in out
    # an old shared profile none of whose members speaks it: each says so
    code, out, _ = run(capsys, "--client", "anthropic-sdk", str(NO_ITEM_ID))
    assert code == 0 and out.count("does not speak responses") == 2
    assert "anthropic-python does not speak" in out


def test_stdin_and_explicit_protocol(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = (BROKEN / "chat-usage-chunk-without-choices.sse").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    code, out, _ = run(capsys, "--protocol", "openai-chat", "-")
    assert code == 1 and "chat.missing-choices" in out


def test_empty_stdin_is_zero_frames(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    code, out, _ = run(capsys, "--protocol", "anthropic", "-")
    assert code == 1 and "framing.zero-frames" in out
    # the cause once, with every client it breaks
    (cause,) = [line for line in out.splitlines() if line.startswith("  • framing.zero-frames")]
    assert "would fail in" in cause and "anthropic-python, @anthropic-ai/sdk" in cause
    assert out.count("because the response carries no SSE data frame") == 1


def test_the_sender_leads_the_verdict(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    code, out, _ = run(capsys, "--protocol", "anthropic", "--sender", "anthropic-python", "-")
    lead = out.splitlines()[out.splitlines().index("anthropic: 1 finding, 1 error") + 1]
    assert code == 1 and lead.startswith("  would fail in anthropic-python because")
    code, out, err = run(capsys, "--sender", "curl", str(CLEAN))
    assert code == 2 and err.startswith("streamscope: error: unknown client 'curl'")


def test_json_file_is_a_non_sse_body(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, str(BROKEN / "chat-non-sse-body.json"))
    assert code == 1 and "framing.non-sse-body" in out
    # The same bytes under another name are still recognised as a body, not as JSON lines.
    copy = tmp_path / "answer.txt"
    copy.write_bytes((BROKEN / "chat-non-sse-body.json").read_bytes())
    code, out, _ = run(capsys, str(copy))
    assert code == 1 and "framing.non-sse-body" in out


def test_as_a_real_process() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "streamscope", "lint", "--json", str(NO_ITEM_ID)],
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 1 and proc.stderr == b""
    assert json.loads(proc.stdout)["errors"] == 1
    proc = subprocess.run(
        [sys.executable, "-m", "streamscope", "lint", "/nonexistent"],
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr


def test_one_finding_is_one_finding(capsys: pytest.CaptureFixture[str]) -> None:
    """Not ``1 findings``: a count says its noun in the singular for one."""
    code, out, _ = run(capsys, str(BROKEN / "chat-missing-done.sse"))
    assert code == 0 and "openai-chat: 1 finding, 0 errors" in out
