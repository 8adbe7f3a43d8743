"""Every client profile's claim, proven by the clients themselves.

Each stream of tests/realclients/support.py (one example per lint rule, every stream in
``resources/replay``) is served from a loopback socket to every real client of its
protocol (``streamscope.realclients``: openai-python and anthropic-python in-process; in
Node, ``ai`` 6 with ``@ai-sdk/openai-compatible``, ``@ai-sdk/openai`` chat and
responses, ``@ai-sdk/anthropic``, and the ``openai`` and ``@anthropic-ai/sdk`` SDKs, at
the versions pinned in ``streamscope.realclients.specs``). For each client, the lint
report's claim for its profile must hold both ways:

- where the profile says the client breaks (empty / error / hidden / partial / garbled),
  the client raises or reports an error, or assembles something other than the intended
  answer;
- where it says ok (or only degraded), the client assembles the intended answer.

A profile is one client per protocol, so a claim is about exactly the client that ran.

The agent CLIs (Claude Code, Codex CLI, Qwen Code, at the versions pinned in
``lint.clients.AGENT_PINS``) are run the same way, one process per stream and one turn
(``realclients.agent_jobs``), and prove their own profiles: each reads streams unlike the
SDK it bundles (Claude Code: @anthropic-ai/sdk; Qwen Code: openai-node; Codex is Rust).

The intended answer is what StreamScope's own decoder assembles from the stream
(``realclients.intended_answer``). Without node/npm the Node clients and the agent CLIs
skip, saying what to install; the installs are cached per machine (the first run pays
~10 s for the Node clients, ~30 s for the agent CLIs). On a warm cache the agent CLIs
take most of the time: Qwen Code spends ~4 s of CPU starting, and waits ~20 s on each
stream it asks again for, ~75 s on a 5xx.
"""

from __future__ import annotations

import pytest

from streamscope.lint import RULES
from streamscope.lint.clients import AGENT_PINS, BY_ID, NODE_PINS, clients_for
from streamscope.realclients import CLIENTS, PROFILE_OF, ClientRun, compare
from streamscope.realclients.agents import AGENTS
from tests.clients.agent_support import installed as install_agent_cli
from tests.lint.cases import CASES
from tests.realclients.support import Example, agent_runs, all_runs, examples, node_data_dir

pytestmark = pytest.mark.timeout(900)  # the first run may install the Node clients


def _profiles(e: Example) -> list[str]:
    return list(dict.fromkeys(PROFILE_OF[c.id] for c in clients_for(e.stream.protocol)))


def _run(example: Example, client: str) -> ClientRun:
    """What ``client`` made of the example: the agent CLIs run apart (:func:`agent_runs`)."""
    if BY_ID[client].runtime == "agent":
        return agent_runs(client)[example.id]
    return all_runs()[example.id][client]


WRONG: dict[str, str] = {}
"""Known mispredictions of the linter's checks that the claims cannot mend (a claim is
what the client does), by example and profile: each is marked xfail, strictly, so it
fails the run once the check is right. None today."""
PAIRS = [
    pytest.param(
        e,
        p,
        id=f"{e.id}-{p}",
        marks=[pytest.mark.xfail(strict=True, reason=why)]
        if (why := WRONG.get(f"{e.id}-{p}"))
        else [],
    )
    for e in examples()
    for p in _profiles(e)
]


@pytest.mark.parametrize("example,profile", PAIRS)
def test_profile_claim_holds(example: Example, profile: str) -> None:
    """A profile is one client per protocol (:func:`test_no_profile_stands_for_two_clients_
    of_one_protocol`), and its claim must hold in every client of it that speaks the
    stream's protocol: a break and "ok" alike."""
    runs = [
        r
        for c in clients_for(example.stream.protocol)
        if PROFILE_OF[c.id] == profile and not (r := _run(example, c.id)).skipped
    ]
    if not runs:
        pytest.skip(f"no client of {profile} is installed: {all_runs()[example.id]}")
    verdicts = compare(runs, example.report, example.intended)
    said = [
        f"{v.client} did {v.observed!r}: {'; '.join(v.differences) or 'the intended answer'}"
        for v in verdicts
    ]
    claim = f"the linter predicts {verdicts[0].predicted!r} ({verdicts[0].prediction})"
    assert all(v.agrees for v in verdicts), f"{claim}; but " + " | ".join(said)


def test_no_profile_stands_for_two_clients_of_one_protocol() -> None:
    """Two clients of one protocol under one profile let a claim hold when only one of
    them breaks (the Anthropic SDKs were one: anthropic-python assembles a stream without
    `message_stop`, @anthropic-ai/sdk raises), so every profile has at most one client
    per protocol."""
    seen: dict[tuple[str, str], str] = {}
    for spec in CLIENTS:
        key = (PROFILE_OF[spec.id], spec.protocol)
        assert key not in seen, f"{seen[key]} and {spec.id} both prove {key[0]} on {key[1]}"
        seen[key] = spec.id


def test_every_claimed_rule_has_an_example_run_by_its_clients() -> None:
    """Every (rule, profile) claim of a profile with real clients is exercised."""
    proven = {p for p in PROFILE_OF.values()}
    exercised = {
        (rule, PROFILE_OF[c.id])
        for e in examples()
        for rule in e.rules
        for c in clients_for(e.stream.protocol)
    }
    # rules of a whole body answering a request for no stream: no stream helper reads
    # such a body (tests/lint/test_checks_answer.py runs the Python SDKs' create() over them)
    unstreamed = {c.rule for c in CASES if c.options.get("stream_asked") is False}
    claims = {
        (rule.id, who)
        for rule in RULES.values()
        for who in rule.breaks
        if who in proven and rule.id not in unstreamed
    }
    assert claims - exercised == set()


def test_the_node_clients_are_the_pinned_versions() -> None:
    data_dir, why = node_data_dir()
    if data_dir is None:
        pytest.skip(why or "no node")
    from streamscope.realclients.node import installed

    have = installed(data_dir)
    assert have is not None and have.versions == NODE_PINS
    assert {c.runtime for c in CLIENTS} == {"python", "node", "agent"}


@pytest.mark.parametrize("agent", [a.id for a in AGENTS])
def test_the_agent_clis_are_the_pinned_versions(agent: str) -> None:
    """The CLIs run are the versions the profiles name (their install marks what npm put
    there); realclients.agents installs what lint.clients pins."""
    spec = next(a for a in AGENTS if a.id == agent)
    assert spec.pins == BY_ID[agent].package_versions == {spec.package: AGENT_PINS[spec.package]}
    assert install_agent_cli(agent).version == AGENT_PINS[spec.package]
