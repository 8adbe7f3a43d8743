"""``streamscope lint`` on every real recording of a provider's normal
behaviour — an answer it cut by length, filtered or refused, its own error, its content
filter's verdicts (tests/fixtures/SOURCES.md says which: ``provider_recordings()``) — exits
0 and says what the provider did, apart from the findings; the trimmed recordings and the
relay defects stay errors.

Run as the user runs it: the ``streamscope`` command in a process of its own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from streamscope.cli.lint import PROVIDER_SECTION
from streamscope.lint import lint_bytes
from tests.lint.provider_cases import (
    expected_outcomes,
    provider_recordings,
    source_rows,
    unterminated,
)
from tests.lint.streams import BROKEN
from tests.support import FIXTURES


def lint(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "streamscope", "lint", *args, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def as_sent(name: str, tmp_path: Path) -> Path:
    """The recording as the provider sent it: SOURCES.md notes where the file lost the
    blank line that ends the last frame (the SDK's fixture file trims it), and Anthropic
    sends it; it is put back (the file without it: test_the_stored_file_…)."""
    path = FIXTURES / name
    if not unterminated(name):
        return path
    whole = tmp_path / path.name
    whole.write_bytes(path.read_bytes().rstrip(b"\n") + b"\n\n")
    return whole


def test_the_recordings_of_the_providers_doing_are_those_sources_names() -> None:
    names = provider_recordings()
    assert "anthropic/ant-py_max-tokens-mid-tool-json_padded.sse" in names
    assert "openai-chat/oai-py_finish-length.sse" in names
    assert "openai-chat/vercel_azure-model-router_content-filter.jsonl" in names
    assert "responses/vercel_openai_error-then-response-failed.jsonl" in names
    assert {"openai-chat/oai-py_refusal.sse", "openai-chat/oai-py_refusal-logprobs.sse"} <= set(
        names
    )


def is_client_limit(finding: dict[str, Any]) -> bool:
    return bool(finding["kind"] == "client" and finding["severity"] == "info")


@pytest.mark.parametrize("name", provider_recordings())
def test_a_providers_doing_exits_0_and_says_what_happened(name: str, tmp_path: Path) -> None:
    path = as_sent(name, tmp_path)
    proc = lint(path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stdout
    expected = expected_outcomes(name)
    data = json.loads(lint(path, "--json").stdout)
    assert data["errors"] == 0
    assert {o["rule"].replace("-in-tool-call", "") for o in data["outcomes"]} == expected
    assert all(o["kind"] == "provider" and o["severity"] == "info" for o in data["outcomes"])
    # (a finding is the wire's, or one client's limit, which is info: rule.py's kinds)
    assert all(f["kind"] == "wire" or is_client_limit(f) for f in data["findings"])
    for f in data["findings"]:  # a mark the cut explains says so
        if f["excused"]:
            assert f"[not the stream's fault: {f['excused']}]" in proc.stdout
    if not expected:  # Azure's filter results, all "safe": nothing happened to say
        assert PROVIDER_SECTION not in proc.stdout and data["happened"] is None
        return
    section = proc.stdout.split(f"{PROVIDER_SECTION}\n", 1)[1].split("\n\n", 1)[0]
    for outcome in data["outcomes"]:  # each as it happened, with its rule and frame
        at = f"frame {outcome['frame']}" if outcome["frame"] is not None else "stream"
        assert f"{outcome['message']}  ({outcome['rule']}, {at})" in section
    # the verdict leads with what happened (no wire defect breaks a client here)
    assert data["verdict"] == data["happened"]
    assert data["verdict"].split(";")[0].split(", at frame")[0] in section


def test_the_stored_anthropic_cut_is_blamed_only_for_its_trimmed_last_line() -> None:
    """The SDK's fixture file lacks the blank line after ``message_stop``: that (a real
    break of @anthropic-ai/sdk, which never sees ``message_stop``, so to it the stream has
    none) is its only error; the cut inside the call is no error at all."""
    name = "anthropic/ant-py_max-tokens-mid-tool-json_padded.sse"
    report = lint_bytes((FIXTURES / name).read_bytes())
    [error] = report.errors
    assert error.rule_id == "anthropic.missing-message-stop"
    assert "no blank line ends" in error.message
    assert set(error.clients) == {"cherry-anthropic", "anthropic-node"}
    assert error.clients["anthropic-node"].effect == "error"
    assert [f.rule_id for f in report.outcomes] == ["provider.length-in-tool-call"]


@pytest.mark.parametrize(
    "name",
    [name for name, (_, notes) in sorted(source_rows().items()) if "TRIMMED" in notes],
)
def test_a_trimmed_recording_is_not_taken_for_the_providers_doing(name: str) -> None:
    proc = lint(FIXTURES / name, "--json")
    data = json.loads(proc.stdout)
    assert data["outcomes"] == []  # what the trim cut is no outcome of the provider's
    if data["errors"]:
        assert proc.returncode == 1


@pytest.mark.parametrize(
    "name", sorted(p.name for p in BROKEN.iterdir() if p.suffix in (".sse", ".json"))
)
def test_a_relay_defect_is_a_finding_never_an_outcome(name: str) -> None:
    """Each broken sample's defect is among the findings; an outcome is only the
    upstream's error a sample relays (responses-no-sequence-number.sse carries one)."""
    proc = lint(BROKEN / name, "--json")
    data = json.loads(proc.stdout)
    assert data["findings"] and all(
        f["kind"] == "wire" or is_client_limit(f) for f in data["findings"]
    )
    assert any(f["kind"] == "wire" for f in data["findings"])
    assert {o["rule"] for o in data["outcomes"]} <= {"stream.upstream-error"}
    assert proc.returncode == (1 if data["errors"] else 0)


def test_a_har_entry_says_what_the_provider_did_and_exits_0(tmp_path: Path) -> None:
    from tests.cli.test_lint_har import _har_file

    cut = (FIXTURES / "openai-chat" / "oai-py_finish-length.sse").read_bytes()
    proc = lint(_har_file(tmp_path, cut))
    assert proc.returncode == 0, proc.stdout
    for entry in proc.stdout.split("entry ")[1:]:  # the client leg and the upstream leg
        section = entry.split(f"  {PROVIDER_SECTION}\n", 1)[1]
        assert section.startswith("    the answer was cut by the length limit (finish `length`)")
