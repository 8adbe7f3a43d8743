"""A real-client run as rows (app/streamscope/realclients/rows.py), the plain data the
window's "Run in real clients" panel shows (its widgets: tests/gui/test_real_clients.py):
which legs can run, what each client assembled on one line, its row beside the linter's
prediction, and the run's summary."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from streamscope.capture.flow import CapturedFrame, Leg
from streamscope.lint.clients import NODE_INSTALL, NODE_MISSING, NODE_PINS, clients_for
from streamscope.realclients.compare import Verdict
from streamscope.realclients.rows import (
    AGREES,
    DIFFERS,
    NOT_RUN,
    ClientRow,
    assembled_text,
    assembled_tooltip,
    client_rows,
    pending_rows,
    predict,
    runnable,
    summary_text,
    version_text,
)
from streamscope.realclients.run import ClientRun
from streamscope.realclients.specs import python_version
from tests.support import FIXTURES, load

CHAT = load(FIXTURES / "openai-chat" / "oai-py_text_usage_done.sse").frames


def chat_leg() -> Leg:
    frames = [CapturedFrame(f.raw, i) for i, f in enumerate(CHAT)]
    return Leg("openai-chat", 200, [("content-type", "text/event-stream")], frames=frames)


def test_what_can_run_in_the_real_clients() -> None:
    assert runnable(chat_leg()) is None
    assert runnable(Leg("anthropic", 529, body=b"{}")) is None  # an error answer runs too
    assert runnable(None) == runnable(Leg("openai-chat")) == "There is no answer to run."
    assert runnable(Leg("lmstudio", 200, body=b"{}")) == "No real client speaks lmstudio."
    assert runnable(Leg("", 200, body=b"{}")) == "No real client speaks this protocol."


def test_what_a_client_assembled_on_one_line_and_in_full() -> None:
    run = ClientRun(
        "openai-python-chat",
        "openai-python",
        "openai-chat",
        text="word " * 30 + "\nlast line",
        reasoning="r" * 1234,
        tool_calls=[("get_weather", '{"city": "Lyon", "days": ' + "9" * 60 + "}")],
        usage=(5, 7),
    )
    line = assembled_text(run)
    said, reasoning, tool = line.split(" · ")
    assert said.startswith('"word word') and said.endswith(f'…" ({len(run.text):,} chars)')
    assert len(said.split('" (')[0]) == 1 + 70  # the quote and 70 characters, "…" last
    assert reasoning == "reasoning 1,234 chars"
    assert tool.startswith('tool get_weather({"city": "Lyon"') and tool.endswith("…)")
    assert assembled_text(ClientRun("c", "n", "openai-chat")) == "(nothing)"
    full = assembled_tooltip(run)
    assert full.startswith("Reasoning:\n" + "r" * 1234)
    assert "Text:\n" + run.text in full and "Tool call get_weather:\n" in full
    assert full.endswith("Usage: 5 → 7")
    assert assembled_tooltip(ClientRun("c", "n", "openai-chat")) == "Text:\n(none)"


def test_a_finished_runs_rows_beside_the_prediction() -> None:
    runs = [
        ClientRun("openai-python-chat", "openai-python", "openai-chat", text="hi", finish="stop"),
        ClientRun(
            "ai-openai-compatible",
            "Cherry",
            "openai-chat",
            error="AI_TypeValidationError: bad\nat line 2\n" + "x" * 500,
        ),
        ClientRun("openai-node-chat", "openai-node", "openai-chat", skipped=NODE_INSTALL),
    ]
    verdicts = [
        Verdict(
            "openai-python-chat", "openai-python", "openai-python-chat", "ok", "fine", "ok", True
        ),
        Verdict(
            *("ai-openai-compatible", "Cherry", "cherry-compatible", "ok", "fine", "error", False),
            ["raised"],
        ),
    ]
    ok, broken, skipped = client_rows(runs, verdicts)
    assert (ok.mark, broken.mark, skipped.mark) == (AGREES, DIFFERS, NOT_RUN)
    assert ok.cells()[:6] == [
        "openai-python",
        AGREES,
        "ok",
        "ok: fine",
        '"hi" (2 chars)',
        "stop",
    ]
    assert ok.reason == "The linter predicts ok: fine\nThe client did ok: the intended answer"
    assert broken.error == "AI_TypeValidationError: bad"  # its first line
    assert broken.reason.endswith("The client did error: raised")
    assert skipped.cells()[1] == f"Not installed: {NODE_INSTALL}"
    # An ok verdict's own sentence says "ok:" already: it is not said twice.
    said = "ok: nothing in this stream is known to break openai-python"
    (plain,) = client_rows(runs[:1], [dataclasses.replace(verdicts[0], prediction=said)])
    assert plain.prediction == said and plain.reason.startswith(f"The linter predicts {said}\n")
    # Nothing to compare with: the clients' results, "not linted".
    (alone,) = client_rows(runs[:1], None)
    assert (alone.prediction, alone.agrees, alone.mark) == ("not linted", None, NOT_RUN)


def test_the_runs_summary() -> None:
    rows = [
        ClientRow("a", "A", "1", agrees=True),
        ClientRow("b", "B", "1", agrees=False),
        ClientRow("c", "C", "1", agrees=False),
        ClientRow("d", "D", "1", hint=NODE_INSTALL),
    ]
    assert summary_text(rows, 1234.56) == (
        "3 of 4 clients ran in 1,234.6 s · 2 differ from the linter: B, C"
        f" · not installed: {NODE_INSTALL}"
    )
    assert summary_text(rows[:1], 0.25) == "1 of 1 clients ran in 0.2 s · all agree with the linter"


def test_before_a_run_each_client_is_pending_or_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no node here
    rows = pending_rows("openai-chat", tmp_path)
    assert [r.client for r in rows] == [c.id for c in clients_for("openai-chat")]
    python = rows[0]
    assert python.pending and python.hint is None and python.cells()[1] == "running…"
    assert python.version == f"openai {python_version('openai')}"  # what is installed
    for row in rows[1:]:
        assert row.hint == NODE_MISSING and not row.pending
    # A Node client not installed: its pinned versions, what the install would bring.
    cherry = next(c for c in clients_for("openai-chat") if c.id == "ai-openai-compatible")
    assert version_text(cherry, tmp_path) == (
        f"ai {NODE_PINS['ai']} · @cherrystudio/ai-core {NODE_PINS['@cherrystudio/ai-core']} · "
        f"@ai-sdk/openai-compatible {NODE_PINS['@ai-sdk/openai-compatible']}"
    )


def test_predict_lints_the_leg_and_finds_its_intended_answer() -> None:
    leg = chat_leg()
    report, intended = predict(leg, stream_asked=True, report=None)
    assert report is not None and not [f for f in report.findings if f.severity == "error"]
    chunks = [json.loads(f.data) for f in CHAT if f.data and f.data != "[DONE]"]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert intended is not None and intended.text == text and intended.usage
    again, _ = predict(leg, stream_asked=True, report=report)
    assert again is report  # a report given is kept, not made again
