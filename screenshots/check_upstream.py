"""The README's picture of Check an upstream… (``check-upstream.png``): the window audits a
relay that is wrong in a known way, live, at its default size in the light theme.

    QT_QPA_PLATFORM=offscreen .venv/bin/python screenshots/check_upstream.py

The relay is StreamScope's own proxy over the demo backend in passthrough, in a thread
of its own (the suite's helper, ``tests/proxy/harness.py``), relaying a recording whose
usage chunk has no ``choices``; the window audits it as a user would, typing its URL, key
and model. The answers run in the installed real clients (the Node ones from the test
suite's install, when there is one), the agent CLIs left out (minutes each). The relay's
key is shown only as the password field's dots.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from screenshots.regenerate import NODE_CLIENTS, run_window, save, until  # noqa: E402
from tests.proxy.harness import make_config, proxied  # noqa: E402

from streamscope.gui.check_upstream import CheckUpstreamView  # noqa: E402
from streamscope.gui.theme import Theme  # noqa: E402
from streamscope.gui.window import MainWindow  # noqa: E402
from streamscope.lint.clients import clients_for  # noqa: E402

MODEL = "replay/broken/chat-usage-chunk-without-choices"
RELAY = {"name": "relay", "protocol": "demo", "default": True, "mode": "passthrough"}


async def shoot(window: MainWindow, _theme: Theme) -> None:
    await until(window.isVisible)
    await until(lambda: window.control.running)
    with proxied(make_config([RELAY])) as relay:
        window.check_action.trigger()
        view = window.tabs.currentWidget()
        assert isinstance(view, CheckUpstreamView)
        view.url.setText(relay.v1)
        view.key.setText(relay.key)
        view.model.setCurrentText(MODEL)
        view.clients = [c.id for c in clients_for("openai-chat") if c.runtime != "agent"]
        if NODE_CLIENTS.is_dir():  # noqa: ASYNC240 - one stat
            view.data_dir = NODE_CLIENTS
        task = view.start()
        assert task is not None
        await task
    await save(window, "check-upstream")
    window.close()


if __name__ == "__main__":
    raise SystemExit(run_window(shoot))
