"""audit/html.py, read back without a browser: the page names no other resource, holds
no key and no header, escapes every string (a property test over hostile text), shows
each cell's grade in words with its finding and a link to the frame it points at, each
finding's frames (the SSE frames of the client leg, not its reads) with the line ends
made visible, the exit status in words, the summary lines, and a previous audit's grade
beside each cell. The page in a real browser: test_html_chromium.py."""

from __future__ import annotations

import copy
import re
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamscope.audit.html import exit_words, render, visible
from streamscope.audit.report import GRADE_WORDS, AuditReport, Cell, ClientInfo, ProbeResult
from tests.audit.html_sample import CHAT, CLIENTS, HOSTILE, KEY, Node, grade_cells, parse, sample
from tests.support import load

# What the page may be made of: no element that loads anything (img, link, script,
# iframe, object, embed, source, base, form...).
ALLOWED_TAGS = {
    "#document", "html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p",
    "dl", "dt", "dd", "ul", "li", "span", "b", "br", "a", "div", "table", "thead", "tbody",
    "tr", "th", "td", "pre", "figure", "figcaption", "svg", "line", "rect", "text",
    "polyline", "path",
}  # fmt: skip


def results_table(page: Node) -> Node:
    (table,) = page.find_all("table", "results")
    return table


def test_the_page_names_no_other_resource() -> None:
    report, flows = sample()
    for html in (render(report, flows), render(report, flows, previous=report)):
        page = parse(html)
        ids = {n.attrs["id"] for n in page.iter() if "id" in n.attrs}
        assert {n.tag for n in page.iter()} <= ALLOWED_TAGS
        for node in page.iter():
            for name, value in node.attrs.items():
                assert name not in {"src", "srcset", "action", "xmlns", "background"}, name
                assert "://" not in value and not value.startswith("//"), (name, value)
                assert "url(" not in value.lower(), value
                if name == "href":  # links go inside the page, to an element that exists
                    assert value.startswith("#") and value[1:] in ids, value
        (style,) = page.find_all("style")
        css = style.text().lower()
        for word in ("url(", "@import", "@font-face", "://"):
            assert word not in css, word
        # the only URL anywhere is the target's, as text
        urls = re.findall(r"[a-z]+://[^\s<'\"]*", html)
        assert urls and set(urls) == {report.target}


def test_no_key_and_no_header_reaches_the_page() -> None:
    report, flows = sample()
    assert any(KEY in v for f in flows.values() for _, v in f.client_leg.headers)  # it was there
    html = render(report, flows, previous=report)
    assert KEY not in html and KEY[:12] not in html
    for header in ("authorization", "x-api-key", "bearer", "content-type"):
        assert header not in html.lower(), header


text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=30)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    target=text, model=text, title=text, probe=text, message=text, detail=text, name=text,
    raw=st.binary(max_size=60),
)  # fmt: skip
def test_every_string_is_escaped(
    target: str, model: str, title: str, probe: str, message: str, detail: str, name: str,
    raw: bytes,
) -> None:  # fmt: skip
    report, flows = sample()
    report.target, report.model = target, model
    report.clients = [replace(CLIENTS[0], name=name), *CLIENTS[1:]]
    first = report.results[0]
    first.title, first.probe = title, probe
    first.findings = [replace(first.findings[0], message=message)]
    cherry = first.cells["cherry-openai"]
    first.cells["cherry-openai"] = replace(cherry, detail=detail)
    leg = flows["f0"].client_leg
    leg.frames[31].raw = b"data: " + raw + b"\n\n"  # frame 31: beside the finding's 32
    page = parse(render(report, flows))  # fails on markup the strings would have opened
    assert {n.tag for n in page.iter()} <= ALLOWED_TAGS
    texts = page.text()
    for said in (target, model, title, probe, message, detail, name):
        assert said in texts


def test_hostile_text_stays_text() -> None:
    report, flows = sample()
    html = render(report, flows)
    assert "<script" not in html.lower() and "</pre><script" not in html
    page = parse(html)
    assert HOSTILE in results_table(page).text()  # the title and the cell's detail
    assert page.text().count(HOSTILE) >= 4  # + the finding's message and the summary line


def test_the_table_has_a_cell_per_probe_and_client_with_its_grade_in_words() -> None:
    report, flows = sample()
    table = results_table(parse(render(report, flows)))
    head = [th.text() for th in table.find_all("thead")[0].find_all("th")]
    # the timing before the clients, each client by its short id, its name as the title
    assert head == ["Request", "Relay", "TTFT", "tokens/s", "longest gap",
                    *(c.id for c in CLIENTS)]  # fmt: skip
    titles = [th.attrs.get("title") for th in table.find_all("thead")[0].find_all("th")[5:]]
    assert titles == [c.name for c in CLIENTS]
    rows = table.find_all("tbody")[0].find_all("tr")
    assert len(rows) == len(report.results)
    assert len(table.find_all("td", "cell")) == grade_cells(report)
    for row, result in zip(rows, report.results, strict=True):
        cells = row.find_all("td", "cell")
        for td, client in zip(cells, CLIENTS, strict=True):
            grade = result.cells[client.id].grade
            assert f"g-{grade}" in td.attrs["class"].split()
            assert GRADE_WORDS[grade] in td.text()  # words, not colour alone
    text_short, tools, long, body, bad_key, hung = rows
    cherry = text_short.find_all("td", "cell")[2]
    assert "chat.usage-chunk-no-choices" in cherry.text() and "frame 32" in cherry.text()
    assert cherry.attrs["title"] == report.results[0].cells[CLIENTS[2].id].detail
    (link,) = cherry.find_all("a")
    assert link.attrs["href"] == "#p0-f32"
    figures = [td.text() for td in long.find_all("td", "num")]
    assert figures == ["150.0 ms", "55.0", "900.0 ms"]
    assert [td.text() for td in hung.find_all("td", "num")] == ["—", "—", "—"]
    assert "hung" in hung.text() and "no first byte in 30 s" in hung.text()
    assert "answered (401)" in bad_key.text()
    assert "ran in the client" in text_short.find_all("td", "cell")[0].text()
    assert "linter's prediction" in cherry.text()


def frame_text(raw: bytes) -> str:
    """A frame's bytes as the page's text shows them (line ends boxed as CR, LF)."""
    return raw.decode().replace("\r", "CR").replace("\n", "LF\n")


def test_each_finding_shows_its_frame_and_two_on_each_side() -> None:
    report, flows = sample()
    page = parse(render(report, flows))
    frames = load(CHAT / "oai-py_text_usage_done.sse").frames
    pre = page.by_id("p0-f32")
    numbers = re.findall(r"^#(\d+) \+", pre.text(), re.M)
    assert numbers == ["30", "31", "32", "33"]  # 34 frames: one after the last
    (at,) = pre.find_all("span", "at")
    assert at.text() == "#32 +600.0 ms\n" + frame_text(frames[32].raw)
    assert frame_text(frames[30].raw) in pre.text() and frame_text(frames[33].raw) in pre.text()
    # the first frame: none before it
    assert re.findall(r"^#(\d+) \+", page.by_id("p1-f0").text(), re.M) == ["0", "1", "2"]
    # three frames to a read: the numbers are the SSE frames', not the reads'
    long = load(CHAT / "oai-py_json-object-long.sse").frames
    pre = page.by_id("p2-f180")
    assert re.findall(r"^#(\d+) \+", pre.text(), re.M) == ["178", "179", "180"]
    assert frame_text(long[179].raw) in pre.text()
    # a body answer shows the body
    assert '{"error": {"message": "bad key", "type": "auth"}}' in page.text()


def test_line_ends_and_control_bytes_are_made_visible() -> None:
    said = visible(b"data: <b>&\r\n\x00\xff\tend")
    boxed = "<span class='eol'>{}</span>"
    assert said == (
        "data: &lt;b&gt;&amp;"
        + boxed.format("CR")
        + boxed.format("LF")
        + "\n"
        + boxed.format("x00")
        + boxed.format("xFF")
        + "\tend"
    )
    assert visible(b"a" * 50, limit=20) == "a" * 20 + "… (30 more characters)"


def test_the_header_says_where_what_when_who_and_the_exit_status() -> None:
    report, flows = sample()
    page = parse(render(report, flows))
    (meta,) = page.find_all("dl", "meta")
    said = dict(zip([d.text() for d in meta.find_all("dt")], meta.find_all("dd"), strict=True))
    assert said["Target"].text() == report.target
    assert said["Protocol"].text() == "openai-chat" and said["Model"].text() == "gpt-test"
    assert said["When"].text() == "2023-11-14 22:13:20 UTC (took 42.50 s)"
    assert "OpenAI Python SDK (openai-python) version 3.57.0" in said["Clients"].text()
    assert "not installed: the linter's prediction" in said["Clients"].text()
    assert said["Exit status"].text() == (
        "1: 1 client(s) break on 1 request(s): Cherry Studio (OpenAI provider type)"
    )
    summary = [li.text() for li in page.find_all("ul", "summary")[0].find_all("li")]
    assert summary == report.summary_lines()
    assert summary[2].startswith("Cherry Studio (OpenAI provider type): 1 of 5 requests break")


def test_the_exit_status_in_words() -> None:
    report, _ = sample()
    clean = copy.deepcopy(report)
    clean.results[0].cells["cherry-openai"] = Cell("cherry-openai", "works")
    assert exit_words(clean) == "0: no client breaks on any answer"
    clean.stopped = "the relay rate-limited the audit (429)"
    assert exit_words(clean) == (
        "1: the audit stopped before the battery's end (the relay rate-limited the audit (429))"
    )
    assert exit_words(report).startswith("1: 1 client(s) break")
    many = copy.deepcopy(report)  # past three clients, the rest are counted
    many.clients = [ClientInfo(f"c{n}", f"Client {n}") for n in range(5)]
    many.results[1].cells = {f"c{n}": Cell(f"c{n}", "breaks") for n in range(5)}
    assert exit_words(many) == (
        "1: 6 client(s) break on 2 request(s): Client 0, Client 1, Client 2 and 3 more"
    )


def test_a_previous_audit_is_laid_beside_each_cell() -> None:
    before, flows = sample()
    after = copy.deepcopy(before)
    after.results[0].cells["cherry-openai"] = Cell("cherry-openai", "works", source="lint")
    after.results[2].cells["openai-python"] = Cell("openai-python", "breaks", "x", "raised")
    after.results.append(
        ProbeResult("usage", "Usage asked", True, "answered", cells={"openai-python": Cell(
            "openai-python", "works")})
    )  # fmt: skip
    del after.results[3]  # text-body: only in the previous audit
    page = parse(render(after, flows, previous=before))
    table = results_table(page)
    fixed = table.by_id("p0").find_all("td", "cell")[2]
    assert "ch-better" in fixed.attrs["class"].split()
    assert fixed.find_all("span", "was")[0].text() == "before: breaks (▲ better)"
    worse = table.by_id("p2").find_all("td", "cell")[0]
    assert worse.find_all("span", "was")[0].text() == "before: works (▼ worse)"
    same = table.by_id("p1").find_all("td", "cell")[0]
    assert same.find_all("span", "was")[0].text() == "before: works (same)"
    new = table.by_id(f"p{len(after.results) - 1}").find_all("td", "cell")[0]
    assert new.find_all("span", "was")[0].text() == "not in the previous audit"
    (meta,) = page.find_all("dl", "meta")
    compared = meta.find_all("dd")[-1].text()
    assert compared.startswith(f"the audit of {before.target} at 2023-11-14 22:13:20 UTC: ")
    assert "1 cell(s) better, 1 cell(s) worse" in compared
    assert compared.endswith("; only in that audit: text-body")
    # without a previous audit: no 'before' anywhere
    assert not parse(render(after, flows)).find_all("span", "was")


def test_a_client_no_list_names_still_gets_a_column_and_an_empty_report_renders() -> None:
    report, flows = sample()
    report.results[0].cells["claude-code"] = Cell("claude-code", "breaks", "x", "no text")
    table = results_table(parse(render(report, flows)))
    assert table.find_all("thead")[0].find_all("th")[-1].text() == "claude-code"
    empty = AuditReport("http://127.0.0.1:9", "anthropic", "m", 0.0, clients=[ClientInfo("a", "A")])
    page = parse(render(empty, {}))
    assert "0: no client breaks on any answer" in page.text()
    assert "No finding on any answer." in page.text() and "No streamed request." in page.text()
