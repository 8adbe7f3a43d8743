"""An audit made by hand for the HTML report's tests: a report of six probes over three
clients, and its flows built from real recordings (tests/fixtures) at chosen times.

What it holds, so tests can count on it:

- ``text-short`` (streamed, 34 frames one per read): Cherry breaks at frame 32 (the
  usage chunk), a finding points there;
- ``tools-parallel`` (streamed, 26 frames): the AI SDK works not cleanly at frame 0
  (no frame before it), the title and the finding's message hold markup;
- ``long`` (streamed, 181 frames, three to a read): a 900 ms stall before read 20, an
  info finding at the last frame (none after it);
- ``text-body`` and ``bad-key``: whole bodies (the second a 401 error envelope);
- ``hung``: streamed, no flow: not run everywhere.

Every request and answer carries :data:`KEY` in its headers (an authorization header
and an ``x-api-key``), which the report must never show.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from streamscope.audit.report import AuditReport, Cell, ClientInfo, Finding, ProbeResult
from streamscope.capture.flow import CapturedFrame, Flow, Leg, RequestRecord
from tests.support import FIXTURES, load

KEY = "sk-audit-SECRET-0123456789abcdef"
MS = 1_000_000
CHAT = FIXTURES / "openai-chat"
HOSTILE = "</pre><script>alert('x')</script> & \"quoted\""

CLIENTS = [
    ClientInfo("openai-python", "OpenAI Python SDK", "3.57.0"),
    ClientInfo("ai-sdk-openai", "AI SDK (OpenAI provider)"),
    ClientInfo("cherry-openai", "Cherry Studio (OpenAI provider type)"),
]
STREAMED_WITH_FRAMES = 3  # text-short, tools-parallel, long: one chart each


def _request() -> RequestRecord:
    headers = [("authorization", f"Bearer {KEY}"), ("content-type", "application/json")]
    return RequestRecord("POST", "http://127.0.0.1:9/v1/chat/completions", headers, b"{}")


def stream_flow(
    flow_id: str, path: Path, *, per_read: int = 1, stall_before: int | None = None
) -> Flow:
    """A flow whose client leg is ``path``'s frames, ``per_read`` SSE frames to a
    captured read, reads 15 ms apart from 120 ms on (900 ms before ``stall_before``)."""
    frames = load(path).frames
    reads: list[CapturedFrame] = []
    t = 120.0
    for n, start in enumerate(range(0, len(frames), per_read)):
        t += 900.0 if n == stall_before else 15.0 if n else 0.0
        raw = b"".join(f.raw for f in frames[start : start + per_read])
        reads.append(CapturedFrame(raw, round(t * MS)))
    leg = Leg(
        protocol="openai-chat",
        status=200,
        headers=[("content-type", "text/event-stream"), ("x-api-key", KEY)],
        sent_ns=0,
        headers_ns=100 * MS,
        frames=reads,
        ended_ns=round((t + 2) * MS),
    )
    return Flow(flow_id, 1_700_000_000.0, 0, "openai-chat", request=_request(), client_leg=leg)


def body_flow(flow_id: str, status: int, body: dict[str, object]) -> Flow:
    leg = Leg(
        protocol="openai-chat",
        status=status,
        headers=[("content-type", "application/json"), ("x-api-key", KEY)],
        headers_ns=200 * MS,
        body=json.dumps(body).encode(),
        ended_ns=210 * MS,
    )
    return Flow(flow_id, 1_700_000_000.0, 0, "openai-chat", request=_request(), client_leg=leg)


def _cells(grades: dict[str, Cell] | None = None) -> dict[str, Cell]:
    """Every client works (ran where installed), but for the cells given."""
    cells = {c.id: Cell(c.id, "works", source="ran" if c.version else "lint") for c in CLIENTS}
    cells.update(grades or {})
    return cells


def sample() -> tuple[AuditReport, dict[str, Flow]]:
    usage_rule = "chat.usage-chunk-no-choices"
    results = [
        ProbeResult(
            "text-short",
            "A short text answer",
            True,
            "answered",
            flow="f0",
            status=200,
            ttft_ms=135.0,
            tokens_per_second=66.7,
            gap_max_ms=15.0,
            findings=[
                Finding(
                    usage_rule,
                    "error",
                    "usage-only chunk without `choices`",
                    32,
                    ("cherry-openai",),
                ),
            ],
            cells=_cells(
                {
                    "cherry-openai": Cell(
                        "cherry-openai",
                        "breaks",
                        usage_rule,
                        "usage-only chunk without `choices`",
                        32,
                    )
                }
            ),
        ),
        ProbeResult(
            "tools-parallel",
            f"<b>Two parallel tool calls</b> {HOSTILE}",
            True,
            "answered",
            flow="f1",
            status=200,
            ttft_ms=None,
            tokens_per_second=40.0,
            gap_max_ms=15.0,
            findings=[Finding("chat.role-late", "warning", HOSTILE, 0, ("ai-sdk-openai",))],
            cells=_cells(
                {"ai-sdk-openai": Cell("ai-sdk-openai", "unclean", "chat.role-late", HOSTILE, 0)}
            ),
        ),
        ProbeResult(
            "long",
            "A long text answer",
            True,
            "answered",
            flow="f2",
            status=200,
            ttft_ms=150.0,
            tokens_per_second=55.0,
            gap_max_ms=900.0,
            findings=[Finding("chat.no-usage", "info", "no usage was asked", 180)],
            cells=_cells(),
        ),
        ProbeResult(
            "text-body",
            "A short text answer, not streamed",
            False,
            "answered",
            flow="f3",
            status=200,
            cells=_cells(),
        ),
        ProbeResult(
            "bad-key",
            "A bad key",
            False,
            "answered",
            flow="f4",
            status=401,
            findings=[Finding("envelope.shape", "info", "the error envelope is the protocol's")],
            cells=_cells(),
        ),
        ProbeResult(
            "hung",
            "Reasoning",
            True,
            "hung",
            detail="no first byte in 30 s",
            cells={c.id: Cell(c.id, "not-run") for c in CLIENTS},
        ),
    ]
    flows = {
        "f0": stream_flow("f0", CHAT / "oai-py_text_usage_done.sse"),
        "f1": stream_flow("f1", CHAT / "oai-py_tool-calls-parallel.sse"),
        "f2": stream_flow("f2", CHAT / "oai-py_json-object-long.sse", per_read=3, stall_before=20),
        "f3": body_flow("f3", 200, {"choices": [{"message": {"content": "Hi"}}]}),
        "f4": body_flow("f4", 401, {"error": {"message": "bad key", "type": "auth"}}),
    }
    report = AuditReport(
        "http://127.0.0.1:9/v1",
        "openai-chat",
        "gpt-test",
        1_700_000_000.0,
        1_700_000_042.5,
        clients=list(CLIENTS),
        results=results,
    )
    return report, flows


def grade_cells(report: AuditReport) -> int:
    """The table's client cells: one per probe and client."""
    return len(report.results) * len(report.clients)


# -- reading the page back ---------------------------------------------------------------

VOID = {"meta", "br", "hr", "img", "link", "input", "col", "area", "base", "wbr", "source"}


@dataclass
class Node:
    """An element of a parsed page (the standard library's HTML parser, no browser)."""

    tag: str
    attrs: dict[str, str]
    children: list[Node | str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self) -> Iterator[Node]:
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.iter()

    def find_all(self, tag: str, cls: str | None = None) -> list[Node]:
        return [
            n
            for n in self.iter()
            if n.tag == tag and (cls is None or cls in n.attrs.get("class", "").split())
        ]

    def by_id(self, ident: str) -> Node:
        (node,) = [n for n in self.iter() if n.attrs.get("id") == ident]
        return node


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        # close up to the matching open element (the page's own markup is well nested)
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return
        raise AssertionError(f"</{tag}> closes nothing open")

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse(page: str) -> Node:
    """``page`` as a tree; an end tag that closes nothing fails, and so does an element
    left open at the end (the page is well nested)."""
    builder = _Builder()
    builder.feed(page)
    builder.close()
    open_ = [n.tag for n in builder.stack[1:]]
    assert not open_, f"left open: {open_}"
    return builder.root
