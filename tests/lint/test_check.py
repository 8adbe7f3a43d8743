"""``lint()`` / ``lint_bytes()`` as an API (what the proxy and the GUI call with a captured
flow), and the report: findings in frame order, verdicts per client, JSON."""

from __future__ import annotations

import pytest

from streamscope.lint import PROFILES, LintError, lint, lint_bytes
from streamscope.recording import read_recording
from streamscope.wire import decode_all
from tests.lint.streams import ANT_TEXT, BROKEN, CHAT_TEXT, chat, native, payloads, rules
from tests.support import FIXTURES


def test_lint_takes_frames_and_detects_the_protocol() -> None:
    frames = read_recording((FIXTURES / ANT_TEXT).read_bytes()).frames
    report = lint(frames)
    assert report.protocol == "anthropic" and report.findings == []
    assert set(report.verdicts()) == {
        "cherry-anthropic",
        "anthropic-python",
        "anthropic-node",
        "claude-code",
        "strict",
    }
    assert all(v.startswith("ok: ") for v in report.verdicts().values())


def test_a_given_protocol_is_used() -> None:
    frames = decode_all(native(ANT_TEXT))
    with pytest.raises(LintError, match="unknown protocol"):
        lint(frames, "grpc")
    # Read as the wrong protocol, the stream is full of findings (the user asked for it).
    assert lint(frames, "openai-chat").errors


def test_undetectable_stream_raises() -> None:
    with pytest.raises(LintError, match="which protocol"):
        lint(decode_all(b'data: {"hello": "world"}\n\n'))
    with pytest.raises(LintError):
        lint_bytes(b'{"a": 1}\n{"b": 2}\n')  # JSON lines of no protocol


def test_zero_frames_without_a_protocol_concern_every_client() -> None:
    report = lint([])
    assert report.protocol is None and rules(report) == {"framing.zero-frames"}
    assert set(report.verdicts()) == set(PROFILES)


def test_flow_metadata() -> None:
    frames = decode_all(chat(payloads(CHAT_TEXT)))
    assert rules(lint(frames, content_type="text/event-stream; charset=utf-8")) == set()
    assert rules(lint(frames, content_type="text/plain")) == {"framing.content-type"}
    enveloped = b'{"error":{"message":"slow down","type":"rate_limit_error"}}'
    assert rules(lint([], status=429, body=enveloped)) == {"framing.http-error"}
    assert rules(lint([], status=429, body=b'{"error":{}}')) == {
        "framing.http-error",
        "framing.error-envelope",  # no message to read
    }
    report = lint([], "openai-chat", body=b"<html>Bad gateway</html>", content_type="text/html")
    assert rules(report) == {"framing.non-sse-body"}
    assert "not JSON" in report.findings[0].message and "text/html" in report.findings[0].message


def test_plain_text_body_is_not_sse() -> None:
    report = lint_bytes(b"upstream connect error or disconnect/reset before headers\n")
    assert rules(report) == {"framing.non-sse-body"}


def test_a_one_line_recording_is_a_stream_not_a_body() -> None:
    line = native(CHAT_TEXT).split(b"\n\n")[1].removeprefix(b"data: ") + b"\n"
    report = lint_bytes(line)
    assert report.protocol == "openai-chat" and "framing.non-sse-body" not in rules(report)


def test_findings_in_frame_order_stream_level_last() -> None:
    report = lint_bytes(
        (FIXTURES / "responses/vercel_openai_reasoning-encrypted-no-summary.jsonl").read_bytes()
    )
    frames = [f.frame for f in report.findings]
    assert frames == sorted(frames, key=lambda n: (n is None, n or 0))
    assert frames[-1] is None


def test_finding_text_and_json() -> None:
    report = lint_bytes((BROKEN / "chat-usage-chunk-without-choices.sse").read_bytes())
    (finding,) = report.findings
    assert str(finding).startswith("error: chat.missing-choices (frame 32): ")
    data = finding.to_json()
    assert data["frame"] == 32 and data["fix"].startswith('Send `"choices": []`')
    assert set(data["breaks"]) == {
        "cherry-openai",
        "cherry-compatible",
        "cherry-deepseek",
        "cherry-xai",
        "cherry-openrouter",
        "cherry-azure",
        "openai-python-chat",
        "openai-node",
    }
    js = report.to_json("anthropic-node")
    assert js["findings"] == [] and js["verdicts"]["anthropic-node"].startswith("n/a")


def test_breaks_are_limited_to_clients_of_the_protocol() -> None:
    report = lint_bytes((BROKEN / "chat-non-sse-body.json").read_bytes())
    (finding,) = report.findings
    assert "anthropic-node" in finding.rule.breaks  # the rule knows the Anthropic SDKs too …
    assert finding.breaks("anthropic-node") is None  # … but this flow is OpenAI Chat


def test_verdict_lists_the_other_causes() -> None:
    report = lint_bytes(
        (FIXTURES / "responses/vercel_github-copilot_item-id-rotation.jsonl").read_bytes()
    )
    assert report.verdict("openai-python-responses") is not None
    items = payloads(CHAT_TEXT)
    del items[-1]["choices"]
    items[0]["object"] = "chat.completion"
    verdict = lint_bytes(chat(items)).verdict("openai-python-chat") or ""
    assert verdict.startswith(
        "would fail in openai-python (Chat Completions) because a chunk (the usage-only"
    )
    assert verdict.endswith("(also: chat.unexpected-object)")


def test_last_frame_lost_or_only_the_end() -> None:
    with_done = lint_bytes(chat(payloads(CHAT_TEXT)).rstrip(b"\n"))
    # [DONE] is the last frame: never dispatched, so to a client there is none (no Chat
    # client minds: a warning)
    assert rules(with_done) == {"framing.no-final-blank-line", "chat.missing-done"}
    assert not with_done.errors
    # the last frame carries only the usage: the answer is whole, the usage lost
    usage_last = lint_bytes(chat(payloads(CHAT_TEXT), done=False).rstrip(b"\n"))
    assert "framing.last-frame-lost" not in rules(usage_last)
    assert "only Usage" in next(
        f.message for f in usage_last.findings if f.rule_id == "framing.no-final-blank-line"
    )
    assert not usage_last.errors
    cut = lint_bytes(chat(payloads(CHAT_TEXT)[:5], done=False).rstrip(b"\n"))
    assert "TextDelta" in next(
        f.message for f in cut.findings if f.rule_id == "framing.last-frame-lost"
    )
