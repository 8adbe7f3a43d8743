"""A report keeps what the provider did apart from what is wrong with the wire
(``lint/report.py``): provider rules' findings are its outcomes, never among its findings
or errors; a verdict says an outcome as what happened and what the client does with it;
a broken wire's verdict comes first, an outcome's before a merely unclean wire's; the
JSON has ``outcomes`` beside ``findings``, each naming its kind.

The rules here are made for the test (their texts are the verdicts' pieces); the clients
are the first profiles that speak OpenAI Chat, whatever they are called."""

from __future__ import annotations

from streamscope.lint.profiles import PROFILES, profiles_for
from streamscope.lint.report import LintFinding, LintReport
from streamscope.lint.rule import Rule, rule
from streamscope.lint.rules import RULES

A, B, C = (p.id for p in profiles_for("openai-chat")[:3])
CUT = rule(
    "provider.test-cut",
    "info",
    "the provider cut it",
    "E.",
    "F.",
    {A: ("partial", "drops that call")},
    shows={B: "hands it over as it came"},
    kind="provider",
)
BROKEN = rule(
    "chat.test-broken", "error", "the test field is broken", "E.", "F.", {C: ("error", "raises")}
)
UNCLEAN = rule(
    "chat.test-unclean", "warning", "the test order is off", "E.", "F.", {A: ("degraded", "warns")}
)
SAID = "the answer was cut by `max_tokens` inside the arguments of tool call `f`"


def of(r: Rule, frame: int | None, message: str = "seen") -> LintFinding:
    return LintFinding.of(r, frame, message, "openai-chat")


def test_the_providers_findings_are_outcomes_apart_from_the_wires() -> None:
    cut, broken = of(CUT, 7, SAID), of(BROKEN, 2)
    report = LintReport("openai-chat", [cut, broken])
    assert report.findings == [broken] and report.outcomes == [cut]
    assert report.all_findings == [broken, cut]  # in frame order
    assert report.errors == [broken] and cut.kind == "provider" and cut.severity == "info"
    # what only the cut explains is excused, the rest kept
    report.excuse(lambda f: f.rule_id == "chat.test-broken", SAID)
    assert report.findings[0].excused == SAID and report.errors == []


def test_an_outcome_is_said_as_what_happened_and_what_each_client_does() -> None:
    report = LintReport("openai-chat", outcomes=[of(CUT, 7, SAID)])
    names = {p: PROFILES[p].name for p in (A, B, C)}
    verdicts = report.verdicts()
    assert verdicts[A] == f"{SAID}, at frame 7; {names[A]} drops that call"
    assert verdicts[B] == f"{SAID}, at frame 7; {names[B]} hands it over as it came"
    assert verdicts[C] == f"{SAID}, at frame 7; nothing before it is known to break {names[C]}"
    assert report.breaking(A)[0][1].effect == "partial" and report.breaking(B) == []
    # the headline: what happened, then each client told (one cause, the clients listed)
    assert report.headline() == (
        f"{SAID}, at frame 7; {names[A]} drops that call; {names[B]} hands it over as it came"
    )
    assert report.note() == report.headline() == report.happened()
    assert report.happened(clients=False) == f"{SAID}, at frame 7"


def test_a_broken_wire_comes_first_then_the_outcome_then_an_unclean_wire() -> None:
    cut, broken, unclean = of(CUT, 7, SAID), of(BROKEN, 2), of(UNCLEAN, 1)
    report = LintReport("openai-chat", [unclean, broken, cut])
    # C breaks on the wire: its verdict is the wire's, and names the outcome too
    assert report.verdict(C) is not None
    assert report.verdict(C).startswith(f"would fail in {PROFILES[C].name} because the test")
    assert report.verdict(C).endswith("(also: provider.test-cut)")
    assert report.headline() == report.verdict(C)
    # A drops the cut call and warns on the order: the outcome before the unclean wire
    assert [f.rule_id for f, _ in report.breaking(A)] == ["provider.test-cut", "chat.test-unclean"]
    assert report.verdict(A) == (
        f"{SAID}, at frame 7; {PROFILES[A].name} drops that call (also: chat.test-unclean)"
    )
    # with no broken wire, the headline says what happened, not the unclean wire
    quiet = LintReport("openai-chat", [unclean, cut])
    assert quiet.headline().startswith(f"{SAID}, at frame 7; ")
    assert LintReport("openai-chat", [unclean]).headline().startswith("would work in ")


def test_more_outcomes_than_one_are_all_said() -> None:
    error = LintFinding.of(RULES["stream.upstream-error"], 9, "overloaded", "openai-chat")
    report = LintReport("openai-chat", [error, of(CUT, 7, SAID)])
    assert report.happened(clients=False) == (
        f"{SAID}, at frame 7 (also: the stream ends in the upstream's error: overloaded)"
    )
    assert report.upstream_error is error


def test_the_json_has_the_outcomes_beside_the_findings_each_with_its_kind() -> None:
    report = LintReport("openai-chat", [of(CUT, 7, SAID), of(BROKEN, 2)])
    data = report.to_json()
    assert [f["rule"] for f in data["findings"]] == ["chat.test-broken"]
    assert [f["kind"] for f in data["findings"]] == ["wire"]
    assert [(f["rule"], f["kind"], f["message"]) for f in data["outcomes"]] == [
        ("provider.test-cut", "provider", SAID)
    ]
    assert data["outcomes"][0]["breaks"][A]["effect"] == "partial"
    assert data["errors"] == 1 and data["happened"] == report.happened()
    # one client's view keeps every outcome: they are what happened, to everyone
    for who in (A, C):
        assert [f["rule"] for f in report.to_json(who)["outcomes"]] == ["provider.test-cut"]
    assert LintReport("openai-chat").to_json()["happened"] is None


def test_a_cancel_or_a_capture_cut_keeps_the_outcomes() -> None:
    report = LintReport("openai-chat", [of(CUT, 7, SAID), of(BROKEN, 2)])
    for other in (report.cancelled_by_client(), report.cut_by_capture("size", True)):
        assert other.outcomes == report.outcomes and other.happened() == report.happened()
