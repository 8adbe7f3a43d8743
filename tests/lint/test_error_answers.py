"""lint/error_answers.py: what each client does with an error answer, proven by running
it. Every real client is served an error answer (400, 401, 404, 503, each in its
protocol's own error envelope) through the real-client runner over a loopback socket;
where ERROR_WORDS says what a client does at that status, the client did it: raised,
threw or reported an error of the class named (or a subclass) carrying the envelope's
message, or, an agent CLI, printed the text said. A flow's verdict then leads with those
words (lint/verdict.judge)."""

from __future__ import annotations

import asyncio
import json

import pytest

from streamscope.codecs import get_codec
from streamscope.lint import LintReport
from streamscope.lint.clients import BY_ID, CLIENTS, PROFILE_OF
from streamscope.lint.error_answers import ERROR_WORDS, error_template, error_words
from streamscope.lint.profiles import PROFILES
from streamscope.lint.verdict import ErrorAnswer, judge
from streamscope.realclients import ClientRun, StreamInput, run_many
from tests.clients.agent_support import DATA_DIR as AGENT_DATA_DIR
from tests.clients.agent_support import installed
from tests.realclients.support import node_data_dir

STATUSES = (400, 401, 404, 503)
MESSAGE = "no account for this model"
_OPENAI = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error"}
_ANTHROPIC = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error"}
_GEMINI = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 404: "NOT_FOUND"}


def envelope(protocol: str, status: int) -> bytes:
    """The protocol's own error body for ``status`` carrying :data:`MESSAGE`."""
    if protocol == "anthropic":
        kind = _ANTHROPIC.get(status, "api_error")
        body: object = {"type": "error", "error": {"type": kind, "message": MESSAGE}}
    elif protocol == "gemini":
        state = _GEMINI.get(status, "UNAVAILABLE")
        body = {"error": {"code": status, "message": MESSAGE, "status": state}}
    else:
        kind = _OPENAI.get(status, "server_error")
        body = {"error": {"message": MESSAGE, "type": kind, "param": None, "code": None}}
    return json.dumps(body).encode()


def answers(protocols: list[str]) -> list[StreamInput]:
    json_type = [("content-type", "application/json")]
    return [StreamInput(envelope(p, s), p, s, json_type) for p in protocols for s in STATUSES]


def bears_out(words: str, run: ClientRun) -> str | None:
    """Why ``run`` does not do what ``words`` say (None: it does)."""
    error = run.error or ""
    if words.startswith("prints "):
        return None if words.removeprefix("prints ") in error else f"printed {error!r}"
    verb = next(v for v in ("raises ", "throws ", "fails with ") if words.startswith(v))
    runtime = BY_ID[run.client].runtime
    if (verb == "raises ") != (runtime == "python"):  # Python raises, Node throws
        return f"{verb.strip()} is not what a {runtime} client does"
    named = words.removeprefix(verb).split(" ", 1)[0]
    classes = {error.split(":", 1)[0], *run.error_types}
    if named not in classes:
        return f"raised {classes}, not {named}"
    return None if MESSAGE in error else f"the envelope's message is not in {error!r}"


def check(streams: list[StreamInput], runs: list[list[ClientRun]]) -> list[str]:
    """Each client at each status where its words are known: what it did that they do not
    say (empty: every client bears its words out)."""
    wrong: list[str] = []
    for stream, ran in zip(streams, runs, strict=True):
        assert get_codec(stream.protocol).decode_error_body(stream.raw).message == MESSAGE
        for run in ran:
            assert run.skipped is None, (run.client, run.skipped)
            profile = PROFILE_OF[run.client]
            words = error_words(profile, stream.status, MESSAGE)
            if words is None:
                continue
            why = bears_out(words, run)
            if why is not None:
                wrong.append(f"{run.client} at {stream.status}: {words!r}, but {why}")
            # and the flow's verdict leads with those words
            lead = judge(LintReport(stream.protocol), profile, ErrorAnswer(stream.status, MESSAGE))
            assert lead.lead == f"{PROFILES[profile].name} {words}"
    return wrong


def test_every_client_that_runs_has_words_for_an_error_answer() -> None:
    for spec in CLIENTS:
        profile = PROFILE_OF[spec.id]
        assert profile in ERROR_WORDS, spec.id
        # an SDK's words hold at every status (its class is what an app catches)
        if spec.runtime != "agent":
            assert all(error_template(profile, s) is not None for s in STATUSES), spec.id
    assert set(ERROR_WORDS) <= set(PROFILES)
    for words in ERROR_WORDS.values():
        assert set(words) <= {"4xx", "5xx"} | {str(s) for s in range(400, 600)}


@pytest.mark.clients  # (the rest of the file is core)
@pytest.mark.timeout(900)  # the first test to ask may install the Node clients
def test_each_sdk_does_with_an_error_answer_what_its_words_say() -> None:
    data_dir, _ = node_data_dir()
    if data_dir is None:
        pytest.skip("node and npm are needed for the Node clients")
    protocols = ["openai-chat", "responses", "anthropic", "gemini"]
    streams = answers(protocols)
    sdks = [c.id for c in CLIENTS if c.runtime != "agent"]
    runs = asyncio.run(run_many(streams, clients=sdks, data_dir=data_dir, timeout=30))
    assert {r.client for rs in runs for r in rs} == set(sdks)
    assert check(streams, runs) == []


@pytest.mark.clients
@pytest.mark.timeout(900)
def test_each_agent_cli_does_with_an_error_answer_what_its_words_say() -> None:
    agents = [c for c in CLIENTS if c.runtime == "agent"]
    for spec in agents:
        installed(spec.id)
    streams = answers(sorted({c.protocol for c in agents}))
    runs = asyncio.run(
        run_many(
            streams,
            clients=[c.id for c in agents],
            data_dir=AGENT_DATA_DIR,
            timeout=30,
            agent_timeout=150,  # Qwen Code asks again on a 5xx for about 75 s
            agent_concurrency=6,
        )
    )
    assert check(streams, runs) == []
    said = {(r.client, s.status) for s, rs in zip(streams, runs, strict=True) for r in rs}
    known = {(c, s) for c, s in said if error_template(PROFILE_OF[c], s) is not None}
    assert len(known) >= 12, sorted(said - known)  # most of what they do is said


def test_the_words_fill_in_the_answer() -> None:
    assert error_words("codex", 404, "gone") == "prints unexpected status 404 Not Found: gone"
    assert error_words("openai-node", 503, "") == "throws APIError 503"
    assert error_words("claude-code", 404, "x") == "prints There's an issue with the selected model"
    assert error_words("codex", 400, "x") is None and error_words(None, 503) is None
    assert error_words("strict", 503, "x") is None
    # a client whose words are not known gets the neutral ones
    report = LintReport("openai-chat")
    assert judge(report, "strict", ErrorAnswer(503, "x")).lead == (
        "a strict SSE client gets the error answer 503: x"
    )
