"""``streamscope audit`` (the real CLI, as a subprocess) against a relay that is wrong in
known ways (tests/audit/defect_relay.py: each classic defect injected into real
recordings), the audit's promises:

- each defect a client breaks on is named (its lint rule in report.json, the table and
  the HTML) with exactly the clients its rule's profiles say break, each proven by that
  client's own run (``source = "ran"``), and the audit exits 1;
- a defect no client breaks on (no ``[DONE]``, no ``sequence_number``) is named as a
  finding of no client and the audit exits 0; so is a missing ``ping`` (``audit.no-ping``,
  info: the wire contract's "`ping` may come at any point", no client needs it), and a
  buffered stream (``audit.buffered``, which only an audit can see: it knows when it
  asked) grades every client that read it "not cleanly", its wait in the timing;
- the recording as it was (``none``) audits clean and exits 0;
- StreamScope's own proxy in repair mode in front of each defective relay audits clean
  and exits 0.

The real clients are the protocol's SDKs and Cherry Studio's provider types (Node, installed
once per machine by tests/realclients/support.py); the agent CLIs, one slow process per
answer, are left out (tests/realclients proves them on the same defects). Cherry Studio's
Grok type (``cherry-xai``) is in: @ai-sdk/xai takes a tool call only whole, so every
real OpenAI tool-call stream troubles it, and the audit grades that limit of the client
(``chat.tool-call-in-pieces``) not cleanly, never a break of the relay's. The repaired audits
run on the linter's word alone (``--no-clients``): the real clients' word on the same
repaired streams is tests/clients' (the proxy in repair mode, end to end).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from streamscope.audit.delivery import MIN_FRAMES
from streamscope.audit.report import AuditReport
from streamscope.codecs import get_codec
from streamscope.lint.clients import PROFILE_OF
from streamscope.lint.rule import BREAKING
from streamscope.lint.rules import RULES
from streamscope.wire import decode_all
from tests.audit.defect_relay import (
    BUFFER_DELAY,
    DEFECTS,
    KEY,
    MODELS,
    DefectRelay,
    recorded_frames,
    running_relay,
)
from tests.proxy.harness import KEY as PROXY_KEY
from tests.proxy.harness import make_config, proxied
from tests.realclients.support import node_data_dir
from tests.support import REPO

CLIENTS: dict[str, tuple[str, ...]] = {
    "openai-chat": (
        "openai-python-chat",
        "ai-openai-compatible",
        "ai-openai-chat",
        "cherry-deepseek",
        "cherry-xai",
        "cherry-openrouter",
        "cherry-azure",
        "openai-node-chat",
    ),
    "anthropic": ("anthropic-python", "ai-anthropic", "anthropic-node"),
    "responses": ("openai-python-responses", "ai-openai-responses", "openai-node-responses"),
}
AUDIT_SECONDS = 240  # one audit's bound: 14 probes and a Node run of every client


@dataclass
class Audited:
    exit: int
    stdout: str
    stderr: str
    report: AuditReport
    html: str
    seconds: float


def run_audit(url: str, protocol: str, key: str, out: Path, *, clients: bool = True) -> Audited:
    """``streamscope audit`` as a user runs it, with --out and --html into ``out``."""
    data_dir, why = node_data_dir()
    if clients and data_dir is None:
        pytest.skip(f"the Node clients cannot be installed: {why}")
    args = ["--url", url, "--protocol", protocol, "--key", key, "--model", MODELS[protocol]]
    args += ["--out", str(out / "run"), "--html", str(out / "report.html")]
    args += ["--clients", ",".join(CLIENTS[protocol])]
    if not clients:
        args.append("--no-clients")
    env = {**os.environ, "STREAMSCOPE_DATA_DIR": str(data_dir or out / "no-clients")}
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "streamscope", "audit", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=AUDIT_SECONDS,
    )
    seconds = time.monotonic() - start
    assert done.returncode in (0, 1), done.stderr[-3000:]
    report = AuditReport.from_json(json.loads((out / "run" / "report.json").read_text()))
    html = (out / "report.html").read_text(encoding="utf-8")
    assert KEY not in done.stdout + done.stderr + html  # the key is masked everywhere
    return Audited(done.returncode, done.stdout, done.stderr, report, html, seconds)


def rule_ids(report: AuditReport) -> set[str]:
    return {f.rule for r in report.results for f in r.findings}


def broken_by(rule: str, protocol: str) -> set[str]:
    """The audited clients whose lint profile ``rule`` breaks (docs/wire-contract.md's
    claims, proven by tests/realclients)."""
    breaks = RULES[rule].breaks
    return {
        c
        for c in CLIENTS[protocol]
        if PROFILE_OF[c] in breaks and breaks[PROFILE_OF[c]].effect in BREAKING
    }


@pytest.fixture(scope="module")
def relay() -> Iterator[DefectRelay]:
    with running_relay() as running:
        yield running


@pytest.fixture(scope="module")
def clean(relay: DefectRelay, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Audited]:
    """The audits of the recordings as they were, one per protocol (run once)."""
    return {
        p: run_audit(relay.base_url("none", p), p, KEY, tmp_path_factory.mktemp(f"none-{p}"))
        for p in CLIENTS
    }


@pytest.mark.parametrize("protocol", list(CLIENTS))
def test_the_recordings_as_they_were_audit_clean(clean: dict[str, Audited], protocol: str) -> None:
    audited = clean[protocol]
    report = audited.report
    assert audited.exit == 0, audited.stdout
    assert [r.outcome for r in report.results] == ["answered"] * 14
    cells = [c for r in report.results for c in r.cells.values()]
    assert {c.client for c in cells} == set(CLIENTS[protocol])
    assert all(c.grade != "breaks" for c in cells)
    ran = [c for c in cells if c.source == "ran"]
    assert len(ran) >= 9 * len(CLIENTS[protocol])  # every streamed answer, in every client
    # What the recordings' models chose (their own tools' names, a finish `stop` where
    # the battery asked for a cut no recording of the protocol has) is said as findings
    # of no client (audit.expected); of the wire, nothing above info
    said = [f for r in report.results for f in r.findings if f.severity != "info"]
    assert {f.rule for f in said} <= {"audit.expected"}
    assert all(f.clients == () for f in said)


BREAKING_DEFECTS = [
    ("usage-without-choices", "openai-chat"),
    ("single-newline", "openai-chat"),
    ("single-newline", "anthropic"),
    ("single-newline", "responses"),
    ("tool-index-from-1", "openai-chat"),
]


@pytest.mark.parametrize(("defect", "protocol"), BREAKING_DEFECTS)
def test_each_defect_is_named_with_the_clients_it_breaks(
    relay: DefectRelay, tmp_path: Path, defect: str, protocol: str
) -> None:
    rule = DEFECTS[defect].rule
    assert rule is not None
    expected = broken_by(rule, protocol)
    assert expected  # the rule breaks some client of the protocol
    audited = run_audit(relay.base_url(defect, protocol), protocol, KEY, tmp_path)
    report = audited.report
    assert audited.exit == 1
    assert rule in rule_ids(report)
    broken = {c.client: c for r in report.results for c in r.cells.values() if c.grade == "breaks"}
    assert set(broken) == expected, (rule, audited.stdout)
    named = [
        c
        for r in report.results
        for c in r.cells.values()
        if c.grade == "breaks" and c.finding == rule and c.source == "ran"
    ]
    assert {c.client for c in named} == expected  # each proven by its own run
    assert all(c.frame is not None for c in named)  # the frame the finding points at
    cause = RULES[rule].cause
    for client in report.clients:
        line = report.client_summary(client)
        if client.id in expected:
            assert "break" in line and cause in line, line
            assert line in audited.stdout
    assert rule in audited.stdout  # the table's "what breaks, and why"
    assert rule in audited.html and cause.split("`")[0].strip() in audited.html


@pytest.mark.parametrize(
    ("defect", "protocol"), [("no-done", "openai-chat"), ("no-sequence-number", "responses")]
)
def test_a_defect_no_client_breaks_on_is_named_and_passes(
    relay: DefectRelay, tmp_path: Path, defect: str, protocol: str
) -> None:
    rule = DEFECTS[defect].rule
    assert rule is not None and not broken_by(rule, protocol)
    audited = run_audit(relay.base_url(defect, protocol), protocol, KEY, tmp_path)
    report = audited.report
    assert audited.exit == 0, audited.stdout
    said = [f for r in report.results for f in r.findings if f.rule == rule]
    assert len(said) == 9  # every streamed answer has the defect
    assert all(f.clients == () for f in said)
    cells = [c for r in report.results for c in r.cells.values()]
    assert all(c.grade != "breaks" for c in cells)
    assert any(c.source == "ran" for c in cells)
    assert rule in audited.html


def test_no_ping_is_no_defect_to_any_client(
    relay: DefectRelay, clean: dict[str, Audited], tmp_path: Path
) -> None:
    audited = run_audit(relay.base_url("no-ping", "anthropic"), "anthropic", KEY, tmp_path)
    assert audited.exit == 0, audited.stdout
    assert rule_ids(audited.report) == rule_ids(clean["anthropic"].report) | {"audit.no-ping"}
    said = [f for r in audited.report.results for f in r.findings if f.rule == "audit.no-ping"]
    assert len(said) == 9 and all(f.severity == "info" and f.clients == () for f in said)
    assert "audit.no-ping" in audited.html
    served = [s for s in relay.served if s.defect == "no-ping" and s.stream and s.recording]
    assert len(served) == 9
    # the recordings behind those answers had pings, which the relay left out
    pinged = [s for s in served if any(f.event == "ping" for f in recorded_frames(s.recording))]
    assert len(pinged) == 9


def test_a_buffered_stream_shows_in_its_timing(
    relay: DefectRelay, clean: dict[str, Audited], tmp_path: Path
) -> None:
    audited = run_audit(relay.base_url("buffered", "openai-chat"), "openai-chat", KEY, tmp_path)
    assert audited.exit == 0, audited.stdout
    streamed = [
        r
        for r in audited.report.results
        if r.stream and r.outcome == "answered" and r.probe not in ("bad-key", "unknown-model")
    ]
    before = {r.probe: r for r in clean["openai-chat"].report.results}
    assert len(streamed) == 9
    for r in streamed:
        assert r.ttft_ms is not None and r.ttft_ms >= BUFFER_DELAY * 1000 * 0.95, r.probe
        assert (before[r.probe].ttft_ms or 0) < BUFFER_DELAY * 1000 / 2, r.probe
        # named where the answer is long enough to tell (audit.delivery.MIN_FRAMES), and
        # what worked on the recording as it was works not cleanly there
        answer = (tmp_path / "run" / "flows" / f"{r.flow}.sse").read_bytes()
        data = sum(1 for f in decode_all(answer) if f.data is not None)
        late = [f for f in r.findings if f.rule == "audit.buffered"]
        assert len(late) == (1 if data >= MIN_FRAMES else 0), (r.probe, data)
        for client, cell in r.cells.items():
            if late and before[r.probe].cells[client].grade == "works":
                assert cell.grade == "unclean" and cell.finding == "audit.buffered", client
    named = [r.probe for r in streamed if any(f.rule == "audit.buffered" for f in r.findings)]
    assert {"text-long", "reasoning"} <= set(named)
    assert not [f for r in before.values() for f in r.findings if f.rule == "audit.buffered"]
    assert "audit.buffered" in audited.html


REPAIRED = [
    ("usage-without-choices", "openai-chat"),
    ("no-done", "openai-chat"),
    ("single-newline", "openai-chat"),
    ("single-newline", "anthropic"),
    ("single-newline", "responses"),
    ("tool-index-from-1", "openai-chat"),
    ("no-sequence-number", "responses"),
    ("no-ping", "anthropic"),
    ("buffered", "responses"),
]


@pytest.mark.parametrize(("defect", "protocol"), REPAIRED)
def test_the_proxy_in_repair_mode_makes_each_defective_relay_audit_clean(
    relay: DefectRelay, tmp_path: Path, defect: str, protocol: str
) -> None:
    upstream = {
        "name": "relay",
        "protocol": protocol,
        "base_url": relay.base_url(defect, protocol),
        "accounts": [{"api_key": KEY}],
        "default": True,
    }
    with proxied(make_config([upstream])) as proxy:
        url = get_codec(protocol).sdk_base_url(proxy.url)
        audited = run_audit(url, protocol, PROXY_KEY, tmp_path, clients=False)
    report = audited.report
    assert [s.defect for s in relay.served[-13:]] == [defect] * 13  # the relay was audited
    assert audited.exit == 0, audited.stdout
    assert [r.outcome for r in report.results] == ["answered"] * 14
    rule = DEFECTS[defect].rule
    assert rule is None or rule not in rule_ids(report)
    assert all(c.grade != "breaks" for r in report.results for c in r.cells.values())
