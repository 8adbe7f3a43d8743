"""lint/assembled.py: the Answer pane's word. A client StreamScope knows that sent the
request gets its own answer; when no such client sent it (StreamScope's client pane, a
client it does not know), what each known client of the protocol assembles, grouped by
what they get, those without the answer first; "no client is known" (None) only for a
protocol no profile speaks."""

from __future__ import annotations

from streamscope.lint import lint, lint_bytes
from streamscope.lint.assembled import (
    CLIENT_PANE,
    AnswerGroup,
    ClientsAnswer,
    answer_for,
    clients_answer,
    protocol_title,
)
from streamscope.lint.profiles import PROFILES, profiles_for
from streamscope.lint.verdict import GETS, ClientAnswer, ErrorAnswer, client_answer
from tests.lint.streams import ANT_TEXT, BROKEN, CHAT_TEXT, chat, native, payloads

NO_EVENT_LINES = (BROKEN / "anthropic-no-event-lines.sse").read_bytes()
SDK_FAILS = ["anthropic-python", "anthropic-node", "claude-code"]
"""The anthropic clients that fail on a stream whose frames have no ``event:`` line."""


def test_a_clean_stream_says_every_known_client_of_the_protocol_has_the_answer() -> None:
    report = lint_bytes(native(ANT_TEXT), "anthropic")
    said = answer_for(report, None, None, CLIENT_PANE)
    assert isinstance(said, ClientsAnswer) and said.whole and said.apart == ()
    assert (said.sent_by, said.protocol) == (CLIENT_PANE, "Anthropic Messages")
    names = tuple(p.name for p in profiles_for("anthropic"))
    assert len(names) > 3 and [a.client for a in said.answers] == list(names)
    assert said.groups == (AnswerGroup(GETS[None], True, names),)
    assert said.text == (
        f"Sent by {CLIENT_PANE}. What the known clients of Anthropic Messages assemble: "
        f"{', '.join(names)}: {GETS[None]}"
    )


def test_a_broken_stream_groups_the_clients_without_the_answer_first() -> None:
    report = lint_bytes(NO_EVENT_LINES, "anthropic")
    said = clients_answer(report, "curl")
    assert said is not None and not said.whole
    broken = tuple(PROFILES[p].name for p in SDK_FAILS)
    assert said.apart == broken
    first, rest = said.groups
    assert first == AnswerGroup(GETS["error"], False, broken)
    assert rest.whole and rest.gets == GETS[None]
    assert set(rest.clients) == {PROFILES["cherry-anthropic"].name, PROFILES["strict"].name}
    # each client's word is its own profile's, as if it had sent the flow
    for answer, p in zip(said.answers, profiles_for("anthropic"), strict=True):
        assert answer == client_answer(report, p.id)


def test_a_known_sender_of_the_protocol_gets_its_own_answer() -> None:
    report = lint_bytes(NO_EVENT_LINES, "anthropic")
    own = answer_for(report, "anthropic-python", None, CLIENT_PANE)
    assert own == client_answer(report, "anthropic-python")
    assert isinstance(own, ClientAnswer) and not own.whole
    # a known client of another protocol sent no client of this one's request
    other = answer_for(report, "openai-python-chat", None, "openai-python (Chat Completions)")
    assert isinstance(other, ClientsAnswer) and other.sent_by.startswith("openai-python")


def test_an_error_answer_leaves_every_client_with_an_error() -> None:
    report = lint([], "openai-chat", status=503, body=b'{"error": {"message": "x"}}')
    said = clients_answer(report, CLIENT_PANE, ErrorAnswer(503, "x"))
    assert said is not None and said.apart == tuple(p.name for p in profiles_for("openai-chat"))
    (group,) = said.groups
    assert group.gets == GETS["error"] and not group.whole
    assert all(a.why.startswith(a.client) and "503" in a.why for a in said.answers)  # its own


def test_no_client_is_known_only_for_a_protocol_no_profile_speaks() -> None:
    report = lint_bytes(chat(payloads(CHAT_TEXT)), "openai-chat")
    for protocol in ("openai-chat", "anthropic", "responses", "lmstudio", "gemini"):
        report.protocol = protocol
        assert clients_answer(report, CLIENT_PANE) is not None, protocol
    report.protocol = "carrier-pigeon"
    assert report.profiles == [] and answer_for(report, None, None, CLIENT_PANE) is None
    assert protocol_title("carrier-pigeon") == "carrier-pigeon"
    assert protocol_title(None) is None and protocol_title("gemini") == "Gemini API"
    report.protocol = None  # any protocol: every client StreamScope knows
    anyone = clients_answer(report, CLIENT_PANE)
    assert anyone is not None and len(anyone.answers) == len(PROFILES)
    assert anyone.asked == "What the known clients assemble"
