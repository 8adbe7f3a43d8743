"""A flow's headers masked with one quick look at them all (``capture.recorder``'s
``mask_headers``), and its whole build, give what masking each value gives.

Covers, as properties over header lists whose values hold the secrets (whole, their
first or last characters at either edge, escaped, split across deltas), Google keys,
short secrets and other text, under credential names and others: ``mask_headers`` gives
what masking each value by name and then with the redactor's ``text`` gives (the way
it masked them one by one), and ``FlowRecorder.build`` gives the same flow as with a
redactor that finds nothing clean (every mask run on every header, URL and byte).
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.capture.flow import Headers
from streamscope.capture.info import FlowInfo
from streamscope.capture.masking import SECRET_HEADERS, mask_headers
from streamscope.capture.recorder import FlowRecorder
from streamscope.redact import Redactor, mask
from streamscope.redact_places import credential_name
from tests.test_redact_clean import Thorough, secrets, texts

NAMES = st.sampled_from(
    ["content-type", "x-request-id", "authorization", "x-api-key", "x-debug-key", "set-cookie"]
)


def _one_by_one(headers: Headers, redactor: Redactor) -> Headers:
    """Each value masked by its header's name, then by the redactor (the reference)."""
    out: Headers = []
    for name, value in headers:
        if name.lower() in SECRET_HEADERS or credential_name(name):
            scheme, _, token = value.partition(" ")
            value = f"{scheme} {mask(token)}" if token and scheme.isalpha() else mask(value)
        out.append((name, redactor.text(value)))
    return out


@st.composite
def flows(draw: st.DrawFn) -> tuple[list[str], Headers, list[str]]:
    """Secrets, headers whose values are made of them, and two URLs."""
    keys = draw(secrets)
    values = texts(keys)
    headers = draw(st.lists(st.tuples(NAMES, values), max_size=8))
    urls = [f"/v1/x?alt=sse&key={draw(values)}&q={draw(values)}" for _ in range(2)]
    return keys, headers, urls


@settings(max_examples=300, deadline=None)
@given(flows())
def test_headers_masked_at_one_look_are_masked_as_one_by_one(
    flow: tuple[list[str], Headers, list[str]],
) -> None:
    keys, headers, _ = flow
    redactor = Redactor(keys)
    assert mask_headers(headers, redactor) == _one_by_one(headers, Thorough(keys))


@settings(max_examples=200, deadline=None)
@given(flows())
def test_a_built_flow_is_what_every_mask_run_everywhere_gives(
    flow: tuple[list[str], Headers, list[str]],
) -> None:
    keys, headers, (url, upstream_url) = flow
    recorder = FlowRecorder("f1", "anthropic", 1 << 20)
    text = "".join(v for _, v in headers)
    body = json.dumps({"messages": [{"content": text}]}, ensure_ascii=False).encode()
    raw = [(k.encode(), v.encode()) for k, v in headers]
    path, _, query = url.partition("?")
    recorder.request("POST", path, raw, body, query.encode())
    recorder.upstream_attempt("openai-chat")
    recorder.upstream_sent(upstream_url, raw, body)
    recorder.upstream_response(200, headers)
    recorder.upstream_body_whole(body)
    recorder.client_message({"type": "http.response.start", "status": 200, "headers": raw})
    recorder.client_message({"type": "http.response.body", "body": body})
    recorder.done()
    info = FlowInfo(capture_note=text)
    assert recorder.build(info, Redactor(keys)) == recorder.build(info, Thorough(keys))
