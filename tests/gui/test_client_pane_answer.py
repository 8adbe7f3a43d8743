"""The Answer tab of the client pane, in the real window offscreen, sending to the
embedded demo backend: the request is StreamScope's own (no client it knows sent it), so
the label over the text says so, and says what each client StreamScope knows of the
stream's protocol would assemble of it (their profiles' claims); never that no client of
the protocol is known, nor one client's answer as though that client had sent it. A
captured leg replayed into the pane says it comes from that flow's client, not the
pane."""

from __future__ import annotations

import html

import pytest

from streamscope.gui.client_answer import TOLERANT
from streamscope.lint.assembled import CLIENT_PANE, REPLAYED
from streamscope.lint.profiles import PROFILES, profiles_for
from tests.gui.support import wait_until
from tests.gui.test_client_pane import _send, _window

ANTHROPIC = [p.name for p in profiles_for("anthropic")]
SENT = f"<b>Sent by {html.escape(CLIENT_PANE)}.</b>"
SDK_FAILS = ("anthropic-python", "anthropic-node", "claude-code")
"""The anthropic clients that fail on a stream whose frames have no ``event:`` line."""


@pytest.mark.qasync
async def test_a_clean_anthropic_stream_says_every_known_client_assembles_it() -> None:
    async with _window() as window:
        pane = window.client
        pane.prompt.setPlainText("ping")
        await _send(window, "anthropic", "demo-chat")
        label = pane.view.client_answer
        said = label.text()
        assert label.isVisibleTo(pane.view)
        assert "no client of this protocol is known" not in said
        assert SENT in said
        assert "Anthropic Messages" in said
        for name in ANTHROPIC:  # every client of the protocol, each named once
            assert said.count(name) == 1, name
        assert "the answer as read here" in said
        assert said.endswith(f"Below: {TOLERANT}, which each of them assembles alike.")
        assert label.answer is not None and label.answer.whole
        # the same answer replayed here, as from a captured flow: the pane did not send it
        assert pane.result is not None
        pane.replay(pane.result.leg, pane.result.request_body)
        await wait_until(lambda: pane.session is not None and pane.session.done)
        await wait_until(lambda: pane.result is not None and label.answer is not None)
        assert f"<b>Sent by {html.escape(REPLAYED)}.</b>" in label.text()
        await _send(window, "anthropic", "demo-chat")  # sent again: the pane's own
        assert label.text() == said


@pytest.mark.qasync
async def test_a_broken_anthropic_stream_says_which_clients_do_not_get_the_answer() -> None:
    async with _window(mode="passthrough") as window:
        pane = window.client
        await _send(window, "anthropic", "replay/broken/anthropic-no-event-lines")
        label = pane.view.client_answer
        said = label.text()
        assert SENT in said
        assert "no client of this protocol is known" not in said
        # not one client's answer, as though that client had sent it
        assert "What anthropic-python assembles" not in said
        broken = [PROFILES[p].name for p in SDK_FAILS]
        line = next(x for x in said.split("<br>") if "an error" in x)
        assert all(name in line for name in broken), line
        assert "color:" in line  # said apart: they do not get the answer shown
        whole = next(x for x in said.split("<br>") if "the answer as read here" in x)
        assert PROFILES["cherry-anthropic"].name in whole and PROFILES["strict"].name in whole
        assert said.endswith(f"Below: {TOLERANT}, not what {', '.join(broken)} get.")
        assert label.answer is not None and not label.answer.whole
