"""realclients/sender_run.py: what the client that sent a flow assembled in a run of its
leg, said as the Answer pane says it (its text, its error, or nothing with why), from
the real clients run over a loopback socket; None when the sender did not run."""

from __future__ import annotations

import asyncio
import json

import pytest

from streamscope.lint import lint_bytes
from streamscope.lint.profiles import PROFILES
from streamscope.lint.verdict import GETS
from streamscope.realclients import ClientRun, compare, intended_answer, run_in_clients
from streamscope.realclients.compare import Verdict
from streamscope.realclients.sender_run import ran_answer, sender_run
from tests.lint.streams import CHAT_TEXT, chat, payloads
from tests.realclients.support import node_data_dir

TEXT = "".join(
    c["delta"].get("content") or "" for p in payloads(CHAT_TEXT) for c in p.get("choices", [])
)
ROLE_ONLY = chat([{"choices": [{"index": 0, "delta": {"role": "assistant"}}]}])


def ran(raw: bytes) -> tuple[list[ClientRun], list[Verdict]]:
    data_dir, why = node_data_dir()
    if data_dir is None:
        pytest.skip(why or "no Node clients")
    runs = asyncio.run(run_in_clients(raw, "openai-chat", data_dir=data_dir))
    report = lint_bytes(raw, "openai-chat")
    return runs, compare(runs, report, intended_answer(raw, "openai-chat"))


@pytest.mark.timeout(900)  # the first test to ask may install the Node clients
def test_a_sender_that_assembled_the_answer_is_whole_and_one_that_got_nothing_says_why() -> None:
    runs, verdicts = ran(chat(payloads(CHAT_TEXT)))
    for sender in ("openai-python-chat", "cherry-openai", "openai-node"):
        answer = ran_answer(runs, sender, verdicts)
        run = sender_run(runs, sender)
        assert answer is not None and run is not None
        assert answer.whole and answer.why == ""
        assert answer.gets == f"the text {json.dumps(TEXT, ensure_ascii=False)}"
        assert answer.source == f"as run in {run.name}"
        assert answer.client == PROFILES[sender].name

    runs, verdicts = ran(ROLE_ONLY)  # no text, no finish: each client its own way
    said = {}
    for run in (r for r in runs if r.skipped is None):
        sender = next(v.profile for v in verdicts if v.client == run.client)
        answer = ran_answer(runs, sender, verdicts)
        assert answer is not None and not answer.whole, run
        said[sender] = answer
        if run.error is not None:
            assert answer.gets.startswith("an error")
            assert run.error.splitlines()[0].rstrip(": ") in answer.gets
        else:  # nothing, and why: the verdict the run bore out
            assert answer.gets == GETS["empty"]
            assert answer.why.startswith("would render empty in"), answer.why
    # at least one client got nothing without an error, as the pane must show
    assert any(a.gets == GETS["empty"] for a in said.values()), said


def test_a_sender_that_did_not_run_leaves_the_profiles_word() -> None:
    run = ClientRun("openai-python-chat", "openai-python", "openai-chat", text="hi")
    skipped = ClientRun("openai-node-chat", "openai-node", "openai-chat", skipped="install")
    assert ran_answer([run, skipped], "openai-node") is None  # not installed
    assert ran_answer([run], "anthropic-python") is None  # another protocol's client
    assert ran_answer([run], None) is None  # no sender known
    answer = ran_answer([run], "openai-python-chat")  # no verdicts: text, no error
    assert answer is not None and answer.whole and answer.gets == 'the text "hi"'
    nothing = ClientRun("openai-python-chat", "openai-python", "openai-chat")
    answer = ran_answer([nothing], "openai-python-chat")
    assert answer is not None and not answer.whole and answer.gets == GETS["empty"]
