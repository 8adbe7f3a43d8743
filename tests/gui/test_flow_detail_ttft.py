"""One TTFT for a flow (gui/flow_detail.py): a thinking stream opens its
thinking block empty long before the first reasoning text. The proxy used to count that
empty start as the first token, the flow list fell back to the analysis's first answer
text, and the window showed two figures for one flow. Now the flow list, the opened
flow's header and its Timing pane all show the one TTFT (``model.events.is_token``:
the first reasoning text here), played through the real proxy at a recorded pace."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from streamscope.gui.models.flows import FlowsModel
from tests.demo.support import FAST
from tests.gui.support import open_window, wait_until
from tests.proxy.harness import KEY, make_config
from tests.support import FIXTURES

THINKING = FIXTURES / "anthropic" / "vercel_thinking-signature_text.jsonl"
WAIT = 0.5  # seconds between the empty thinking block's start and its first text
TEXT_LATER = 0.2  # seconds from the first reasoning text to the first answer text


def _paced(folder: Path) -> None:
    """The recording at once up to its first reasoning text, which comes WAIT later, and
    its answer's text TEXT_LATER after that."""
    lines = THINKING.read_bytes().splitlines()
    first = next(i for i, line in enumerate(lines) if b"thinking_delta" in line)
    text = next(i for i, line in enumerate(lines) if b"text_delta" in line)
    assert b'"thinking":""' in lines[1] and 1 < first < text  # the empty start comes first
    (folder / "think.jsonl").write_bytes(THINKING.read_bytes())
    later = WAIT + TEXT_LATER
    times = [0.0] * first + [WAIT] * (text - first) + [later] * (len(lines) - text)
    (folder / "think.jsonl.timing").write_text(json.dumps(times))


def _ask(url: str) -> None:
    body = {
        "model": "replay/think",
        "max_tokens": 1000,
        "stream": True,
        "messages": [{"role": "user", "content": "divide by 5"}],
    }
    headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
    with httpx.stream("POST", url + "/v1/messages", json=body, headers=headers) as r:
        assert r.status_code == 200
        r.read()


@pytest.mark.qasync
async def test_the_list_the_header_and_the_timing_pane_show_one_ttft(tmp_path: Path) -> None:
    _paced(tmp_path)
    demo = {**FAST, "replay_dirs": [str(tmp_path)]}
    config = make_config([{"name": "demo", "protocol": "demo", "default": True, "demo": demo}])
    async with open_window(config) as window:
        url = window.control.url
        assert url is not None
        await asyncio.to_thread(_ask, url)
        model = window.traffic.model
        await wait_until(lambda: model.rowCount() == 1 and model.summary_at(0).linted)
        summary = model.summary_at(0)
        ttft = summary.ttft_ms
        # Not the empty block's start (at 0 ms). The replay paces from its own start, a
        # little before the flow's clock starts, so a figure can fall just short of WAIT.
        assert ttft is not None and ttft >= WAIT * 1000 * 0.9
        cell = model.data(model.index(0, FlowsModel.TTFT))
        assert cell == f"{ttft:.0f}"

        detail = window.traffic.open_flow(summary.id)
        assert detail.task is not None
        await detail.task
        assert f"TTFT {ttft:,.0f} ms" in detail.header.text()
        lines = detail.client_view.timing.toPlainText().splitlines()

        def figure(label: str) -> float:
            line = next(x for x in lines if x.startswith(label))
            return float(line[len(label) :].strip().removesuffix(" ms").replace(",", ""))

        assert figure("First token (TTFT)") == round(ttft, 1)
        # the answer's text came later: shown under its own name, not as the TTFT
        first_text = figure("First answer text")
        assert first_text >= (WAIT + TEXT_LATER) * 1000 * 0.9 and first_text > ttft
