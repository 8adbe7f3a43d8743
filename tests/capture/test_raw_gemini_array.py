"""A Gemini stream sent as one JSON array (``:streamGenerateContent`` without ``alt=sse``)
is captured as a stream, not a body: over a real socket, through the proxy over the demo,
the flow's client leg reads back as its elements (wire/jsonarray.py), each timed by the
send that carried it and linked to its upstream frame; the analysis shows the answer and
a clean verdict (before, it showed no answer, no frames, no timing, and the error
``framing.body-not-a-response``); the ``.sse`` export, its timing sidecar and the HAR keep
the bytes the client got, and a HAR read back is the same stream. A keepalive the array
got while the upstream was silent is an element of its own, with its time."""

from __future__ import annotations

import json

import httpx

from streamscope.analysis.view import flow_leg_lint, flow_reading, flow_verdict
from streamscope.capture.har import from_har
from streamscope.capture.sse import leg_frames
from streamscope.codecs.gemini.common import KEEPALIVE
from streamscope.wire.jsonarray import ArrayElement
from tests.proxy.demo_support import demo_config
from tests.proxy.harness import Running, proxied

ASKED = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
CHAT = 'You said: "hi". This is the StreamScope demo backend.'
SLOW = "Sorry for the wait: this answer started after a long silence on purpose."


def _ask(running: Running, model: str) -> tuple[str, bytes]:
    r = httpx.post(
        f"{running.url}/v1beta/models/{model}:streamGenerateContent",
        json=ASKED,
        headers={"x-goog-api-key": running.key},
        timeout=20,
    )
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    assert isinstance(json.loads(r.content), list)
    return r.headers["x-request-id"], r.content


def _admin(running: Running, path: str) -> httpx.Response:
    auth = {"authorization": f"Bearer {running.key}"}
    return httpx.get(running.url + path, headers=auth, timeout=10).raise_for_status()


def test_an_array_stream_reads_back_as_a_stream_with_its_answer_and_times() -> None:
    config = demo_config(keepalive=0.3, slow_seconds=1.0, tokens_per_second=40.0)
    with proxied(config) as running:
        flows = running.server.app.flows
        assert flows is not None
        for model, said in (("demo-chat", CHAT), ("demo-slow", SLOW)):
            flow_id, got = _ask(running, model)
            flows.flush()
            flow = flows.get(flow_id)
            assert flow is not None and flow.client_leg.streamed and flow.client_leg.body is None
            assert flow.client_leg.raw() == got  # the bytes the client got, as it got them

            frames = [f for _, f in leg_frames(flow.client_leg)]
            assert all(isinstance(f, ArrayElement) for f in frames)
            elements = [f for f in frames if f.data is not None]
            assert [json.loads(f.data) for f in elements] == json.loads(got)
            times = [f.arrival_ns for f in elements]
            assert times == sorted(times) and times[-1] - times[0] > 0.1e9  # paced, not one send
            content = [f for f in flow.client_leg.frames if f.sources]
            assert len(content) >= len(said.split())  # linked to the upstream's frames

            reading = flow_reading(flow)
            answer = reading.answer
            assert answer is not None and answer.choices[0].text == said
            report = flow_leg_lint(flow)
            assert report is not None
            rules = [f.rule.id for f in report.findings]
            assert not [r for r in rules if r.startswith("framing.")], rules
            assert flow_verdict(flow) == "ok"
            assert reading.timing is not None

            # Exports keep the bytes; a HAR read back is the same stream.
            assert _admin(running, f"/admin/flows/{flow_id}/client.sse").content == got
            timing = json.loads(
                _admin(running, f"/admin/flows/{flow_id}/client.sse.timing").content
            )
            assert len(timing) == len(frames)
            har = _admin(running, f"/admin/flows/{flow_id}.har").json()
            (back,) = from_har(har)
            assert back.client_leg.raw() == got
            assert [f.data for _, f in leg_frames(back.client_leg)] == [f.data for f in frames]
            if model == "demo-slow":  # silent past the keepalive interval before its text
                first = next(i for i, f in enumerate(elements) if said.split()[0] in (f.data or ""))
                keepalives = [f for f in elements[:first] if json.loads(f.data) == KEEPALIVE]
                assert len(keepalives) >= 2
                assert keepalives[-1].arrival_ns - keepalives[0].arrival_ns >= 0.25e9
