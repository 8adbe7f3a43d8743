"""Secrets known by where they stand (redact.py with redact_places.py): the query
parameters of a URL in free text (a log line) whose name says they hold a credential, and
headers and parameters the proxy knows nothing of, masked whatever their value (a key
the proxy never learnt) in the capture, the HAR export and the log."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import httpx
import pytest

from streamscope.capture.har import to_har
from streamscope.redact import RedactingFilter, Redactor, mask_params
from tests.proxy.harness import KEY, make_config, proxied


def test_query_parameters_in_free_text_are_masked_by_name() -> None:
    line = "GET https://h/v1/models?key=abcd1234wxyz&alt=sse&access_token=tok-9876 200"
    assert mask_params(line) == "GET https://h/v1/models?key=…wxyz&alt=sse&access_token=…9876 200"
    assert mask_params("no query here") == "no query here"


UNKNOWN = {  # credentials of the client's own, in headers the proxy knows nothing of
    "x-acme-token": "acme-tok-5f1c2d3e4b5a69788796a5b4",
    "x-partner-key": "partner-key-0a9b8c7d6e5f4a3b2c1d",
    "x-client-secret": "client-secret-77aa88bb99cc00dd",
    "x-session-id": "sess-1234567890abcdef12345678",
}
QUERY = {"token": "qtok-aabbccddeeff00112233", "session": "qsess-ffeeddccbbaa99887766"}


def test_credentials_the_proxy_does_not_know_are_masked_in_capture_har_and_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    upstream = {"name": "demo", "protocol": "demo", "default": True}
    capture = tmp_path / "flows.sqlite3"
    with proxied(make_config([upstream]), capture_path=capture) as up:
        query = "&".join(f"{k}={v}" for k, v in QUERY.items())
        r = httpx.post(
            f"{up.url}/v1/chat/completions?{query}",
            json={"model": "demo-chat", "messages": [{"role": "user", "content": "hi"}]},
            headers={"authorization": f"Bearer {KEY}", **UNKNOWN},
            timeout=10,
        )
        assert r.status_code == 200, r.text
        flows = up.server.app.flows
        assert flows is not None
        flows.flush()
        flow = flows.get(r.headers["x-request-id"])
        assert flow is not None
        stored = json.dumps(flow.to_json()) + json.dumps(to_har([flow]))
        auth = {"authorization": f"Bearer {KEY}"}
        stored += httpx.get(f"{up.url}/admin/flows/{flow.id}.har", headers=auth).text
    disk = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    # The headers and parameters were captured (their last 4 characters show)...
    for value in [*UNKNOWN.values(), *QUERY.values()]:
        assert f"…{value[-4:]}" in stored
    # ...and their values are nowhere.
    leaks = [v for v in [*UNKNOWN.values(), *QUERY.values()] if v in stored]
    leaks += [v for v in [*UNKNOWN.values(), *QUERY.values()] if v.encode() in disk]
    leaks += [v for v in [*UNKNOWN.values(), *QUERY.values()] if v in caplog.text]
    assert leaks == []


def test_the_log_filter_masks_a_urls_credential_parameters() -> None:
    record = logging.LogRecord(
        "httpx",
        logging.INFO,
        __file__,
        1,
        "HTTP Request: GET %s",
        ("https://h/m?key=zz-1234abcd",),
        None,
    )
    RedactingFilter(Redactor([])).filter(record)
    assert record.getMessage() == "HTTP Request: GET https://h/m?key=…abcd"
