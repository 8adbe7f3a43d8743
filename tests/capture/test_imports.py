"""A file given back, read as flows (app/streamscope/capture/imports.py): HAR or a raw stream,
told apart by the content type when it says, else by the bytes; what cannot be read is
one :class:`UnreadableImport` saying why. (Through the admin API, into the store:
tests/capture/test_recorder_admin_api.py.)"""

from __future__ import annotations

import json

import pytest

from streamscope.capture.har import from_har, to_har
from streamscope.capture.imports import UnreadableImport, read_flows
from tests.capture.test_har import CHAT_SSE, RESPONSES_TEXT, translated_flow

HAR = json.dumps(to_har([translated_flow()])).encode()
STREAM = CHAT_SSE.read_bytes()


def _flows_json(data: bytes, content_type: str | None = None) -> list[object]:
    return [f.to_json() for f in read_flows(data, content_type)]


@pytest.mark.parametrize(
    "content_type",
    [None, "", "application/json", "application/har+json", "Application/HAR+JSON; charset=utf-8"],
)
def test_a_har_log_reads_as_its_flows(content_type: str | None) -> None:
    want = [f.to_json() for f in from_har(json.loads(HAR))]
    assert _flows_json(HAR, content_type) == want
    assert _flows_json(b"\xef\xbb\xbf\n " + HAR, content_type) == want  # a BOM, blanks


@pytest.mark.parametrize(
    "content_type", [None, "text/event-stream", "TEXT/EVENT-STREAM; charset=utf-8", "text/plain"]
)
def test_a_raw_stream_reads_as_one_imported_flow(content_type: str | None) -> None:
    (flow,) = read_flows(STREAM, content_type)
    assert (
        flow.info.imported and flow.info.outcome is None and flow.client_protocol == "openai-chat"
    )
    assert flow.upstream_leg.raw() == flow.client_leg.raw() == STREAM
    (lines,) = read_flows(RESPONSES_TEXT.read_bytes(), "application/x-ndjson")
    assert lines.upstream_leg.protocol == "responses"


def test_the_content_type_decides_over_the_bytes() -> None:
    # Said to be a stream: read as one, though it is a HAR log (and it is no stream).
    with pytest.raises(UnreadableImport, match="protocol"):
        read_flows(HAR, "text/event-stream")
    # Said to be HAR: a stream is refused, not read as a stream.
    with pytest.raises(UnreadableImport, match="not a HAR file"):
        read_flows(STREAM, "application/har+json")
    # A protocol given for a raw stream is taken; an unknown one is refused.
    (flow,) = read_flows(b'data: {"x": 1}\n\n', protocol="anthropic")
    assert flow.upstream_leg.protocol == "anthropic"
    with pytest.raises(UnreadableImport, match="unknown protocol 'bedrock'"):
        read_flows(b"data: {}\n\n", protocol="bedrock")


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"", "empty"),
        (b"  \r\n", "empty"),
        (b"hello, not a stream\n", "no SSE data frames"),
        (b'{"log": {"entries": []}, "note": "\xff"}', "not UTF-8"),
        (b'{"log": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),
        (b'{"log": {}}', "entries"),
    ],
)
def test_what_cannot_be_read_says_why(data: bytes, why: str) -> None:
    with pytest.raises(UnreadableImport, match=why):
        read_flows(data)


def test_a_lone_surrogate_in_text_is_refused_but_kept_in_bytes() -> None:
    # Headers and URLs are stored and exported as text: a lone surrogate there would fail
    # every later step, so it is refused at the door.
    har = json.loads(HAR)
    har["log"]["entries"][0]["request"]["headers"].append({"name": "x", "value": "a\ud800"})
    with pytest.raises(UnreadableImport, match="lone surrogate"):
        read_flows(json.dumps(har).encode())
    # A body is bytes: whatever it holds is stored as it is.
    har = json.loads(HAR)
    har["log"]["entries"][0]["response"]["content"]["text"] += "\ud800"
    (flow,) = read_flows(json.dumps(har).encode())
    assert flow.client_leg.raw().endswith(b"\xed\xa0\x80")
