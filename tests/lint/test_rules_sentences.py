"""Every claim of the catalogue (``lint/rules.py``) read as the verdict says it.

A verdict is "<lead> <client> because <cause>: it <how>", and what a client does with
what the provider did (a cut, its error) is "…; <client> <how or shows>". A profile is
one client, "it", so each clause must go on from that subject: a verb that agrees with
"it" (no "raise"), and no other client's name or package in it (the old shared
Anthropic profile read "they @anthropic-ai/sdk (Node) raises …"). Each sentence is
rendered by the report, for every profile a rule names, and read back."""

from __future__ import annotations

import re

import pytest

from streamscope.lint.clients import CLIENTS, PROFILE_OF
from streamscope.lint.profiles import PROFILES, Profile
from streamscope.lint.report import LintFinding, LintReport
from streamscope.lint.rule import Rule, rule
from streamscope.lint.rules import RULES

ADVERBS = {"never", "still", "only", "silently", "also", "first", "then", "just", "at"}
MODALS = {"cannot", "can", "may", "might", "must", "will", "would"}


def _head(name: str) -> str:
    """A client's name without what it adds in parentheses (``Cherry Studio``)."""
    return name.split(" (")[0]


def _packages(profile: str) -> set[str]:
    """The scoped npm packages of the clients that prove ``profile``."""
    return {
        package
        for spec in CLIENTS
        if PROFILE_OF[spec.id] == profile
        for package in spec.package_versions
        if package.startswith("@")
    }


def _named(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w@/-]){re.escape(name)}(?![\w/-])", text) is not None


def misreadings(prof: Profile, clause: str) -> list[str]:
    """What is wrong with ``clause`` read right after ``prof``'s name or pronoun."""
    out = []
    words = clause.split()
    verb = next((w for w in words if w not in ADVERBS), "").rstrip(":;,")
    if not (verb.endswith("s") or verb in MODALS) or verb in ("its", "this"):
        out.append(f"{verb!r} does not go on from {prof.pronoun!r}")
    mine = _packages(prof.id)
    for other in PROFILES.values():
        if other.id == prof.id:
            continue
        for name in {other.name, _head(other.name)} - {_head(prof.name)}:
            if _named(clause, name):
                out.append(f"it names another client, {name}")
        for package in _packages(other.id) - mine:
            if _named(clause, package):
                out.append(f"it names another client's package, {package}")
    return list(dict.fromkeys(out))


def _said(r: Rule) -> list[tuple[str, str, str]]:
    """(profile, protocol, what the report says of it) for every client ``r`` names."""
    out = []
    for who in r.breaks:
        protocol = sorted(PROFILES[who].protocols & r.protocols)[0]
        finding = LintFinding.of(r, 2, "seen", protocol)
        out.append((who, protocol, LintReport(protocol, [finding]).verdicts()[who]))
    for key in r.shows:
        who, _, at = key.partition("@")
        protocol = at or sorted(PROFILES[who].protocols & r.protocols)[0]
        finding = LintFinding.of(r, 2, "seen", protocol)
        out.append((who, protocol, LintReport(protocol, [finding]).verdict_line(who)))
    return out


CLAIMS = [(r, who, p, s) for r in RULES.values() for who, p, s in _said(r)]


@pytest.mark.parametrize(
    "r,who,protocol,said", CLAIMS, ids=[f"{r.id}-{w}@{p}" for r, w, p, _ in CLAIMS]
)
def test_every_claim_reads_as_a_sentence_about_its_client(
    r: Rule, who: str, protocol: str, said: str
) -> None:
    prof = PROFILES[who]
    if who in r.breaks:
        clause = r.breaks[who].how
    else:
        clause = r.shows.get(f"{who}@{protocol}") or r.shows[who]
    # a wire defect's verdict names the client, then "it"; an outcome says the name
    subject = f"{prof.name} " if r.kind == "provider" else f"because {r.cause} (frame 2): it "
    assert subject + clause in said, said
    assert prof.name in said and prof.pronoun == "it"
    assert misreadings(prof, clause) == [], said


def test_the_reading_finds_what_a_shared_profile_said() -> None:
    """The sentence the old Anthropic profile gave, and others like it, read wrong."""
    node = PROFILES["anthropic-node"]
    old = '@anthropic-ai/sdk (Node) raises "stream ended …" (anthropic-python assembles it)'
    assert misreadings(PROFILES["anthropic-python"], old) == [
        "'@anthropic-ai/sdk' does not go on from 'it'",
        "it names another client, @anthropic-ai/sdk",
        "it names another client's package, @anthropic-ai/sdk",
    ]
    assert misreadings(node, "raise their status error") == ["'raise' does not go on from 'it'"]
    assert misreadings(node, "drop the frames: they are lost") == [
        "'drop' does not go on from 'it'"
    ]
    compatible = PROFILES["cherry-compatible"]
    said = "rejects the chunk (@ai-sdk/openai's .chat() throws)"
    assert misreadings(compatible, said) == ["it names another client's package, @ai-sdk/openai"]
    assert misreadings(compatible, "never dispatches the last frame") == []
    assert misreadings(PROFILES["strict"], "cannot parse the payload") == []


def test_a_garbled_claim_in_a_rule_is_caught_in_its_verdict() -> None:
    """The check reads what the report renders: a rule with the old shared claim fails."""
    made = rule(
        "anthropic.test-garbled",
        "error",
        "the stream does not end with `message_stop`",
        "E.",
        "F.",
        {"anthropic-sdk": ("error", '@anthropic-ai/sdk (Node) raises "stream ended …"')},
    )
    said = dict((w, s) for w, _, s in _said(made))
    assert set(said) == {"anthropic-python", "anthropic-node"}
    assert said["anthropic-python"].endswith(
        ': it @anthropic-ai/sdk (Node) raises "stream ended …"'
    )
    assert misreadings(PROFILES["anthropic-python"], made.breaks["anthropic-python"].how)
