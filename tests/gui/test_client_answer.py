"""gui/client_answer.py: the Answer tab says what the sending client assembles apart from
the tolerant reading, from the core's ClientAnswer (lint/verdict.py), and whether a run
or the client's profile says it; when no known client sent it, who did and what each
known client assembles (lint/assembled.py), those without the answer said apart."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from streamscope.gui.client_answer import TOLERANT, ClientAnswerLabel, answer_html, clients_html
from streamscope.lint.assembled import ClientsAnswer
from streamscope.lint.verdict import GETS, ClientAnswer


def test_an_answer_the_client_did_not_get_is_labelled_as_the_tolerant_reading() -> None:
    got = ClientAnswer("openai-python", GETS["empty"], "would render empty in <it>", False)
    said = answer_html(got)
    assert "<b>What openai-python assembles:</b> nothing (an empty answer)" in said
    assert "would render empty in &lt;it&gt;" in said  # the reason, escaped
    assert f"Below: {TOLERANT}, not what openai-python gets." in said
    assert "color:" in said  # said apart: not the answer shown


def test_an_answer_the_client_assembles_alike_says_so() -> None:
    said = answer_html(ClientAnswer("openai-python", GETS[None], "", True))
    assert "assembles:</b> the answer as read here <i>(as its profile says)</i><br>" in said
    assert said.endswith(f"Below: {TOLERANT}, which openai-python assembles alike.")
    assert "color:" not in said
    assert answer_html(None).startswith(f"Below: {TOLERANT}")


def test_an_answer_as_run_says_where_it_ran() -> None:
    ran = ClientAnswer("openai-python", 'the text "hi"', "", True, "openai-python stream()")
    said = answer_html(ran)
    assert "assembles:</b> the text &quot;hi&quot; <i>(as run in openai-python stream())</i>" in (
        said
    )
    assert "as its profile says" not in said


def test_when_no_known_client_sent_it_each_known_clients_answer_is_said() -> None:
    broke = ClientAnswer("A <sdk>", GETS["error"], "why", False)
    copes = ClientAnswer("B", GETS[None], "", True)
    mixed = ClientsAnswer("StreamScope's client pane", "P", (copes, broke, copes))
    said = answer_html(mixed)
    assert said == clients_html(mixed)
    head, first, second, below = said.split("<br>")
    assert head.startswith("<b>Sent by StreamScope&#x27;s client pane.</b> What the known")
    assert "clients of P assemble <i>(as their profiles say)</i>:" in head
    assert "color:" in first and f"• A &lt;sdk&gt;: {GETS['error']}</span>" in first
    assert second == f"• B, B: {GETS[None]}" and "color:" not in second
    assert below == f"Below: {TOLERANT}, not what A &lt;sdk&gt; gets."
    alike = clients_html(ClientsAnswer("x", None, (copes, copes)))
    assert "What the known clients assemble" in alike
    assert alike.endswith(f"Below: {TOLERANT}, which each of them assembles alike.")
    two = clients_html(ClientsAnswer("x", "P", (broke, broke)))
    assert two.endswith("not what A &lt;sdk&gt;, A &lt;sdk&gt; get.")


def test_the_label_shows_and_clears(qapp: QApplication) -> None:
    label = ClientAnswerLabel()
    assert label.isHidden()
    got = ClientAnswer("x", GETS["error"], "why", False)
    label.show_answer(got)
    assert not label.isHidden() and label.answer == got and "why" in label.text()
    label.clear_answer()
    assert label.isHidden() and label.text() == "" and label.answer is None
    label.deleteLater()
