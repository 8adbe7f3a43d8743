"""``streamscope audit`` against StreamScope's own proxy over the demo: its exit status
(0 clean, 1 when a client breaks, 2 for a usage error), the progress on stderr and the
table and summary lines on stdout, ``--out`` (read back) and ``--compare``; the key is in
no output. The linter judges (``--no-clients``): real clients run in
tests/audit/test_run_clients.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamscope.audit.output import read_out
from streamscope.cli import main
from tests.proxy.demo_support import FAST
from tests.proxy.harness import Running, make_config, proxied

BROKEN = "replay/broken/chat-usage-chunk-without-choices"


def _demo(mode: str) -> Running:  # type: ignore[misc]
    upstream = {"name": "demo", "protocol": "demo", "default": True, "mode": mode, "demo": FAST}
    return proxied(make_config([upstream]))  # type: ignore[return-value]


def _argv(running: Running, model: str, *more: str) -> list[str]:
    return [
        "audit",
        "--url",
        running.v1,
        "--protocol",
        "openai-chat",
        "--key",
        running.key,
        "--model",
        model,
        "--no-clients",
        *more,
    ]


def test_a_clean_relay_exits_0_and_a_broken_one_1_with_the_cause_per_client(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _demo("repair") as running:
        assert main(_argv(running, "demo-chat", "--out", str(tmp_path / "clean"))) == 0
        clean = capsys.readouterr()
        with _demo("passthrough") as broken:
            argv = _argv(broken, BROKEN, "--out", str(tmp_path / "broken"))
            argv += ["--html", str(tmp_path / "broken.html")]
            assert main([*argv, "--compare", str(tmp_path / "clean")]) == 1
        out = capsys.readouterr()
    assert len(clean.err.strip().splitlines()) == 14  # a progress line per probe
    assert "all 14 requests work" in clean.out
    # the summary line per client names the cause (audit.report.client_summary)
    lines = out.out.splitlines()
    cherry = next(line for line in lines if line.startswith("@cherrystudio/ai-core openai-chat"))
    assert "of 14 requests break" in cherry and "choices" in cherry
    assert "chat.missing-choices" in out.out  # the finding, in the table's notes
    assert "worse" in out.out and "cells:" in out.out  # --compare laid beside it
    page = (tmp_path / "broken.html").read_text()
    assert "chat.missing-choices" in page and "before: works" in page  # the HTML compares too
    assert running.key not in page and broken.key not in page
    for text in (clean.out, clean.err, out.out, out.err):
        assert running.key not in text and broken.key not in text
    written = read_out(tmp_path / "broken")
    assert written.report.exit_status() == 1 and len(written.flows) == 14
    files = list((tmp_path / "broken").rglob("*"))
    assert {p.suffix for p in files if p.is_file()} == {".json", ".sse", ".timing", ".har"}
    for path in files:
        if path.is_file():
            assert broken.key.encode() not in path.read_bytes()
            assert path.stat().st_mode & 0o077 == 0  # the owner's only


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"--protocol": "openai"}, "unknown protocol"),
        ({"--key": ""}, "no key"),
        ({"--clients": "nobody"}, "unknown clients"),
        ({"--compare": "/nonexistent/audit"}, "--compare"),
    ],
)
def test_usage_errors_exit_2_in_one_line(
    change: dict[str, str],
    said: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("STREAMSCOPE_KEY", raising=False)
    args = {"--url": "http://127.0.0.1:9/v1", "--protocol": "openai-chat", "--key": "k" * 20}
    args["--model"] = "m"
    args.update(change)
    argv = ["audit", *(x for k, v in args.items() if v for x in (k, v))]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_help_documents_the_battery_and_the_exit_status(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["audit", "--help"])
    assert exc.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "Exit status: 0" in text and "1 when" in text and "2 for a usage error" in text
    for probe in ("tool-forced", "bad-key", "unknown-model", "cut-max-tokens"):
        assert probe in text


def test_without_a_model_the_first_the_relay_lists_is_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with _demo("repair") as running:
        argv = _argv(running, "x", "--out", str(tmp_path))
        argv = argv[: argv.index("--model")] + argv[argv.index("--model") + 2 :]
        assert main(argv) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["model"].startswith("demo-")
