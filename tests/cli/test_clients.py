"""``streamscope clients list|run`` (:mod:`streamscope.cli.clients`): every real client and
whether it can run here, a recording replayed into the installed Python SDK beside the
linter's prediction, and one line with exit status 2 for what cannot be replayed. The
suite's data dir is empty (tests/conftest.py): no Node client is installed, so those are
listed as such and skipped. ``clients install`` fetches from npm: tests/clients/."""

from __future__ import annotations

import json

import pytest

from streamscope.analysis.decode import decode_frames
from streamscope.cli import main
from streamscope.lint.clients import CLIENTS, PYTHON_EXTRA
from streamscope.model.assemble import assemble
from streamscope.realclients.agents import AGENTS
from tests.support import FIXTURES, load

RECORDING = FIXTURES / "openai-chat" / "oai-py_text_usage_done.sse"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["clients", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_list_names_every_client_and_whether_it_can_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _run(capsys, "list")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == [spec.id for spec in CLIENTS]
    assert {a.id for a in AGENTS} <= {s.id for s in CLIENTS}  # the agent CLIs among them
    for spec, line in zip(CLIENTS, lines, strict=True):
        assert spec.protocol in line
        if spec.runtime != "python":  # nothing installed in the suite's data dir
            assert "[not installed: " in line, line  # how to get it: install, or Node itself
        else:  # the SDKs the test extra installs
            assert line.endswith("[ready]"), line


def test_run_replays_a_recording_into_the_python_sdk_beside_the_linter(
    capsys: pytest.CaptureFixture[str],
) -> None:
    recording = load(RECORDING)
    decoded = decode_frames(recording.frames, "openai-chat")  # our own reading of it
    text = assemble(event for _, event in decoded.events).choice(0).text
    code, out, err = _run(capsys, "run", "--only", "openai-python-chat", str(RECORDING))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "openai-chat: 1 clients"
    assert lines[2].endswith("[openai-python-chat]  agrees")
    assert json.dumps(text[:40])[:-1] in out  # what the SDK assembled, quoted and cut
    assert "client did: ok" in out


def test_lint_clients_json_has_every_client_of_the_protocol_with_its_verdict(
    capsys: pytest.CaptureFixture[str],
) -> None:
    recording = load(RECORDING)
    decoded = decode_frames(recording.frames, "openai-chat")
    text = assemble(event for _, event in decoded.events).choice(0).text
    code = main(["lint", "--clients", "--json", str(RECORDING)])
    runs = json.loads(capsys.readouterr().out)
    assert code == 0
    assert [r["client"] for r in runs] == [s.id for s in CLIENTS if s.protocol == "openai-chat"]
    by_id = {r["client"]: r for r in runs}
    ran = by_id.pop("openai-python-chat")
    assert ran["skipped"] is None and ran["error"] is None
    assert ran["text"] == text  # the SDK assembled what our decoder reads
    assert ran["verdict"]["agrees"] is True and ran["verdict"]["predicted"] == "ok"
    for skipped in by_id.values():  # the Node clients: not installed here
        assert skipped["skipped"] and skipped["verdict"]["agrees"] is None


def test_node_clients_not_installed_are_skipped_not_failed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _run(capsys, "run", "--only", "openai-node-chat", str(RECORDING))
    assert code == 0
    assert "skipped" in out and "not installed: " in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "/nonexistent/stream.sse"], "cannot read /nonexistent/stream.sse"),
        (["run", "--only", "nosuch", str(RECORDING)], "unknown clients: nosuch"),
    ],
)
def test_what_cannot_be_replayed_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, out, err = _run(capsys, *args)
    assert code == 2 and out == ""
    assert err.startswith("streamscope: error: ") and message in err
    assert err.count("\n") == 1


def test_a_protocol_no_real_client_speaks_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    native = (
        FIXTURES / "lmstudio" / "DOC-EXAMPLES-NOT-CAPTURE_lmstudio-api-v1-chat_event-catalog.sse"
    )
    code, out, err = _run(capsys, "run", str(native))
    assert (code, out) == (2, "")
    assert err == "streamscope: error: no real client speaks lmstudio\n"


def test_the_help_says_how_to_install_the_python_clients_from_a_checkout(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        main(["clients", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert PYTHON_EXTRA in said and "streamscope[clients]" not in said
