"""What an answer says, and verdicts for what the client asked: a stream that
ends in the upstream's error is an outcome (the provider's doing, apart from the findings)
quoting it, and says what each client shows; a
whole body answering a request for no stream is read against its protocol's non-stream
schema; a verdict names only the clients of the flow's own protocol (a stream the client
cancelled, and what the request asked: tests/analysis/test_view_asked_and_cancelled.py).

The clients' behaviour the rules claim is checked here by running the Python SDKs over
the same bytes (tests/sdk_clients.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from streamscope.cli.lint import run as lint_cli
from streamscope.lint import RULES, lint_bytes
from streamscope.lint.profiles import profiles_for
from tests import sdk_clients
from tests.lint.answers import CHAT_ERROR, NO_STREAM, body_bytes
from tests.lint.streams import ANT_TEXT, CHAT_TEXT, RESP_ERROR, RESP_TEXT, native, payloads, typed
from tests.support import fixture_files

# -- the upstream's error in a stream -----------------------------------------------------


def _anthropic_error_stream() -> bytes:
    """A real Anthropic recording cut after its first text delta, then the upstream's
    `event: error` (as Anthropic sends an overload mid-stream)."""
    items = payloads(ANT_TEXT)
    cut = next(i for i, p in enumerate(items) if p["type"] == "content_block_delta") + 1
    error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    return typed([*items[:cut], error])


def test_a_chat_stream_ending_in_the_upstreams_error_is_a_finding() -> None:
    report = lint_bytes(CHAT_ERROR)
    error = report.upstream_error
    assert error is not None and error.frame == 1 and error.severity == "info"
    # the provider's doing: an outcome, apart from the findings about the stream's form
    assert report.outcomes == [error] and report.findings == [] and error.kind == "provider"
    # The upstream's own message, its key masked to the last 4 characters.
    assert error.message.startswith("upstream overloaded (key …1234)")
    assert "sk-abcdefghijklmnop1234" not in json.dumps(report.to_json())
    assert "(server_error, overloaded)" in error.message
    # What each client shows: an error, not an empty answer.
    assert "APIError" in error.shows["openai-python-chat"]
    assert report.headline().startswith("the stream ends in the upstream's error: upstream")
    verdicts = report.verdicts()
    assert not any(v.startswith("ok") for v in verdicts.values())
    assert "raises openai.APIError" in verdicts["openai-python-chat"]


def test_the_rules_claims_are_what_the_python_sdks_do() -> None:
    # openai-python, Chat: the text, then APIError with the upstream's message.
    with pytest.raises(openai.APIError, match="upstream overloaded"):
        sdk_clients.openai_chat(CHAT_ERROR)
    # anthropic-python: APIStatusError carrying the upstream's error body.
    with pytest.raises(anthropic.APIStatusError) as caught:
        sdk_clients.anthropic_messages(_anthropic_error_stream())
    assert caught.value.body == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    # openai-python, Responses: a real recording (`error` with a nested `error` object,
    # then `response.failed`) raises APIError with the upstream's message …
    with pytest.raises(openai.APIError, match="You exceeded your current quota"):
        sdk_clients.openai_responses(native(RESP_ERROR))
    # … the flat `error` event raises nothing; get_final_response() raises RuntimeError.
    flat = [
        {"type": "error", "sequence_number": p["sequence_number"], **p["error"]}
        if p["type"] == "error"
        else p
        for p in payloads(RESP_ERROR)
    ]
    assert lint_bytes(typed(flat)).upstream_error is not None
    with pytest.raises(RuntimeError, match="Didn't receive a `response.completed` event"):
        sdk_clients.openai_responses(typed(flat))
    shows = RULES["stream.upstream-error"].shows
    assert "APIError" in shows["openai-python-chat@openai-chat"]
    responses = shows["openai-python-responses@responses"]
    assert {"openai.APIError", "RuntimeError"} <= set(responses.split())
    assert "APIStatusError" in shows["anthropic-python"]
    # The Node clients' claims are proven by running them: tests/realclients.
    assert {"cherry-openai", "anthropic-node", "openai-node"} <= {k.split("@")[0] for k in shows}


def test_an_anthropic_error_stream_is_not_blamed_for_its_missing_end() -> None:
    report = lint_bytes(_anthropic_error_stream())
    assert report.protocol == "anthropic" and report.upstream_error is not None
    assert report.upstream_error.message == "Overloaded (overloaded_error)"
    assert report.errors == [] and all(report.verdict(p.id) is None for p in report.profiles)
    excused = [f for f in report.findings if f.excused]
    assert excused and all(f.severity == "info" and not f.clients for f in excused)
    assert "APIStatusError" in report.verdicts()["anthropic-python"]
    assert "APIError" in report.verdicts()["anthropic-node"]


def test_the_real_responses_error_recording_ends_in_its_error_not_a_missing_terminal() -> None:
    report = lint_bytes(native(RESP_ERROR))
    error = report.upstream_error
    assert error is not None and error.frame is not None
    message = next(p for p in payloads(RESP_ERROR) if p["type"] == "error")
    assert str(message.get("message") or message["error"]["message"])[:40] in error.message
    assert "responses.missing-terminal" not in {f.rule_id for f in report.findings}
    assert report.headline().startswith("the stream ends in the upstream's error: ")


def test_streamscope_lint_on_the_chat_error_stream_says_it_ends_in_the_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "chat-error.sse"
    path.write_bytes(CHAT_ERROR)
    args = argparse.Namespace(file=str(path), protocol="auto", client=None, json=False)
    code = lint_cli(args)
    out = capsys.readouterr().out
    assert code == 0  # an outcome: the stream is right, the upstream failed
    said = out.split("what the provider did:\n", 1)[1].splitlines()[0]
    assert said.startswith(
        "  the stream ends in the upstream's error: upstream overloaded (key …1234)"
    )
    assert said.endswith("(stream.upstream-error, frame 1)")
    assert "openai-chat: 0 findings, 0 errors" in out
    lines = [line.strip() for line in out.split("0 errors\n", 1)[1].splitlines()]
    # one verdict (it breaks no client: no cause lines), saying what every client shows
    (line,) = [line for line in lines if line]
    assert line.startswith("the stream ends in the upstream's error: ")
    told = [p.name for p in profiles_for("openai-chat") if p.id != "strict"]
    assert all(name in line for name in told), [n for n in told if n not in line]


# -- whole bodies for requests that asked for no stream -----------------------------------


@pytest.mark.parametrize("source", [CHAT_TEXT, ANT_TEXT, RESP_TEXT])
def test_a_whole_body_for_no_stream_is_no_missing_stream(source: str) -> None:
    report = lint_bytes(body_bytes(source), **NO_STREAM)  # type: ignore[arg-type]
    assert [str(f) for f in report.findings] == []
    assert report.headline() == "ok"
    # The same body for a request that asked for a stream is the stream that never came.
    asked = lint_bytes(body_bytes(source), is_body=True, stream_asked=True)
    assert [f.rule_id for f in asked.findings] == ["framing.non-sse-body"]


def _openai_create(body: bytes, kind: str) -> Any:
    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, content=body, headers={"content-type": "application/json"})

    client = openai.OpenAI(
        api_key="sk-test",
        base_url="http://sdk.test/v1",
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )
    if kind == "chat":
        return client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}]
        )
    return client.responses.create(model="m", input="hi")


def test_the_body_rules_claims_are_what_openai_python_does() -> None:
    empty = body_bytes(CHAT_TEXT, lambda b: b.update(choices=[]))
    report = lint_bytes(empty, **NO_STREAM)  # type: ignore[arg-type]
    assert report.headline().startswith(
        "would fail in openai-python (Chat Completions) because the 200 answer"
    )
    with pytest.raises(IndexError):
        _ = _openai_create(empty, "chat").choices[0]
    error = json.dumps({"error": {"message": "no such model", "type": "x"}}).encode()
    report = lint_bytes(error, "openai-chat", **NO_STREAM)  # type: ignore[arg-type]
    assert [f.rule_id for f in report.findings] == ["framing.error-body-ok-status"]
    assert report.findings[0].message == "no such model (x)"
    with pytest.raises(TypeError):
        _ = _openai_create(error, "chat").choices[0]
    no_usage = body_bytes(RESP_TEXT, lambda b: b.pop("usage"))
    report = lint_bytes(no_usage, **NO_STREAM)  # type: ignore[arg-type]
    assert [(f.rule_id, f.severity) for f in report.findings] == [
        ("framing.body-without-usage", "info")
    ]
    assert _openai_create(no_usage, "responses").usage is None


# -- verdicts name the clients of the flow's own protocol ---------------------------------


@pytest.mark.parametrize("path", fixture_files("anthropic"), ids=lambda p: p.name)
def test_an_anthropic_verdict_never_names_openai_python(path: Path) -> None:
    report = lint_bytes(path.read_bytes())
    text = json.dumps([report.headline(), report.verdicts(), report.to_json()])
    assert "openai-python" not in text and "openai-node" not in text


def test_an_anthropic_body_verdict_never_names_openai_python() -> None:
    for edit in (None, lambda b: b.pop("content")):
        report = lint_bytes(body_bytes(ANT_TEXT, edit), **NO_STREAM)  # type: ignore[arg-type]
        assert report.protocol == "anthropic"
        text = json.dumps([report.headline(), report.to_json()])
        assert "openai-python" not in text and "openai-node" not in text
    asked = lint_bytes(body_bytes(ANT_TEXT), "anthropic", is_body=True, stream_asked=True)
    text = json.dumps([asked.headline(), asked.to_json()])
    assert "openai-python" not in text and "openai-node" not in text
    assert asked.headline().startswith(("would fail in ", "would render empty in "))
    assert asked.verdict("anthropic-python") is not None  # a stream that never came
