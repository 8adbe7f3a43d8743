"""``streamscope translate --request`` (app/streamscope/cli/translate_request.py): a
request body in, the body the proxy sends upstream out (stdout), what the translation
dropped or changed on stderr (one line each, the lines the window lists; ``-q``
silences), exit 0; an unreadable body is one line and exit 2. ``--from auto`` tells the
protocol by the documented rule: property-tested on bodies built from the official SDKs'
request types, and on any JSON (never a crash)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamscope.cli.translate_request import detect_protocol
from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.translation.request import translate_request
from tests.codecs.sdk_places import ROOTS
from tests.codecs.sdk_strategies import JSON_VALUE, header_keys, params
from tests.proxy.request_notes_support import BODY, DROPPED


def cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "streamscope", "translate", "--request", *args],
        input=stdin,
        capture_output=True,
        timeout=60,
    )
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode()
    )


def _file(tmp_path: Path, body: Any) -> str:
    path = tmp_path / "body.json"
    path.write_text(json.dumps(body))
    return str(path)


def test_the_upstream_body_on_stdout_and_the_notes_on_stderr(tmp_path: Path) -> None:
    proc = cli("--to", "openai-chat", _file(tmp_path, BODY))
    assert proc.returncode == 0, proc.stderr
    upstream = json.loads(proc.stdout)
    # The same translation the proxy makes, line for line (streaming, with usage).
    request = get_codec("anthropic").decode_request(BODY)
    request.stream, request.include_usage = True, True
    expected = translate_request(request, get_codec("openai-chat"))
    assert upstream == expected.body
    assert [t["function"]["name"] for t in upstream["tools"]] == ["get_weather"]
    lines = proc.stderr.splitlines()
    assert lines == [f"streamscope: request: {n.line}" for n in expected.notes]
    for field in DROPPED:
        assert any(line.startswith(f"streamscope: request: {field} dropped: ") for line in lines)
    quiet = cli("--to", "openai-chat", "-q", _file(tmp_path, BODY))
    assert quiet.returncode == 0 and quiet.stderr == "" and json.loads(quiet.stdout) == upstream


def test_stdin_an_explicit_source_and_the_same_protocol(tmp_path: Path) -> None:
    body = {"model": "m", "input": "hi", "instructions": "be brief", "store": False}
    proc = cli("--from", "responses", "--to", "anthropic", "-", stdin=json.dumps(body).encode())
    assert proc.returncode == 0, proc.stderr
    upstream = json.loads(proc.stdout)
    assert upstream["system"] == "be brief" and "store" not in upstream
    assert upstream["messages"] == [{"role": "user", "content": "hi"}]
    notes = [line.removeprefix("streamscope: request: ") for line in proc.stderr.splitlines()]
    assert sorted(n.split(":")[0] for n in notes) == ["max_tokens changed", "store dropped"]
    (max_tokens,) = [n for n in notes if n.startswith("max_tokens")]
    assert max_tokens.endswith(f"sent instead: {upstream['max_tokens']}")
    # The same protocol on both sides: the proxy sends the body as written, no notes.
    same = cli("--to", "anthropic", _file(tmp_path, BODY))
    assert same.returncode == 0 and json.loads(same.stdout) == BODY
    assert same.stderr.splitlines() == ["streamscope: anthropic to anthropic: sent as written"]


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (None, "cannot read"),  # no such file
        (b"{not json", "not JSON"),
        (b"\xff\xfe", "not"),  # not UTF-8 text
        (b"[1, 2]", "a JSON object, not list"),
        (b'{"model": "m"}', "cannot tell its protocol"),
        (
            b'{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": 7}]}',
            "not a valid Anthropic Messages request",
        ),
    ],
)
def test_an_unreadable_body_is_one_line_and_exit_2(
    tmp_path: Path, data: bytes | None, said: str
) -> None:
    path = tmp_path / "body.json"
    if data is not None:
        path.write_bytes(data)
    proc = cli("--to", "openai-chat", str(path))
    assert proc.returncode == 2 and proc.stdout == ""
    (line,) = proc.stderr.splitlines()
    assert line.startswith("streamscope: error: ") and said in line, line
    assert "Traceback" not in proc.stderr


def test_non_stream_is_refused_in_one_line(tmp_path: Path) -> None:
    proc = cli("--to", "openai-chat", "--non-stream", _file(tmp_path, BODY))
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1


# -- --from auto -----------------------------------------------------------------------------

SHAPES = [
    # (body, protocol): what each client protocol sends, in short.
    ({"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": "hi"}]}, "anthropic"),
    ({"model": "m", "messages": [{"role": "user", "content": "hi"}]}, "openai-chat"),
    (
        {
            "model": "m",
            "max_tokens": 9,
            "messages": [{"role": "user", "content": "hi"}],
            "stream_options": {"include_usage": True},
        },
        "openai-chat",
    ),
    (
        {
            "model": "m",
            "max_tokens": 9,
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "tool_calls": [{"id": "c", "type": "function"}]},
                {"role": "tool", "tool_call_id": "c", "content": "x"},
            ],
        },
        "openai-chat",
    ),
    (
        {  # Claude Code: a system message mid-way, adaptive thinking
            "model": "m",
            "max_tokens": 9,
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "system", "content": "be brief"},
            ],
            "thinking": {"type": "adaptive"},
        },
        "anthropic",
    ),
    ({"model": "m", "input": "hi"}, "responses"),
    ({"model": "m", "input": [], "instructions": "x", "store": False}, "responses"),
    ({"model": "m", "previous_response_id": "resp_1"}, "responses"),
    ({"model": "m", "input": "hi", "system_prompt": "be brief"}, "lmstudio"),
    ({"model": "m", "input": "hi", "context_length": 4096}, "lmstudio"),
    ({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}, "gemini"),
    ({"contents": [], "generationConfig": {"maxOutputTokens": 5}}, "gemini"),
    ({"contents": "hi"}, None),
    ({"model": "m"}, None),
    ({"messages": "not a list"}, None),
    ([1, 2], None),
]


@pytest.mark.parametrize(("body", "protocol"), SHAPES)
def test_the_protocol_is_told_by_the_rule(body: Any, protocol: str | None) -> None:
    assert detect_protocol(body) == protocol


QUICK = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.mark.parametrize("protocol", ["anthropic", "responses"])
@QUICK
@given(data=st.data())
def test_a_body_the_sdk_types_allow_is_told_as_its_own(protocol: str, data: st.DataObject) -> None:
    root = ROOTS[protocol]()["request"]
    body = data.draw(params(root, "m", wire=True, omit=header_keys(protocol)))
    if protocol == "responses" and set(body) == {"model"}:
        assert detect_protocol(body) is None  # nothing but a model: say it with --from
    else:
        assert detect_protocol(body) == protocol


@QUICK
@given(data=st.data())
def test_a_chat_body_without_max_tokens_is_chat(data: st.DataObject) -> None:
    root = ROOTS["openai-chat"]()["request"]
    body = data.draw(params(root, "m", wire=True, omit=header_keys("openai-chat")))
    body.pop("max_tokens", None)
    assert detect_protocol(body) == "openai-chat"


@given(
    st.dictionaries(
        st.sampled_from(
            ["model", "messages", "input", "max_tokens", "tools", "system_prompt", "x"]
        ),
        JSON_VALUE,
    )
    | JSON_VALUE
)
def test_any_json_is_told_or_not_never_a_crash(body: Any) -> None:
    assert detect_protocol(body) in (None, *PROTOCOLS)
