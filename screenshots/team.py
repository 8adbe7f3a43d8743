"""The screenshot of "Running it for a team": a window attached to one of two replicas.

    QT_QPA_PLATFORM=offscreen .venv/bin/python screenshots/team.py

It starts a throwaway PostgreSQL (tests/postgres.py), two ``streamscope serve`` replicas
on it in front of a fake upstream (tests/replicas/support.py: accounts ``a`` and ``b``;
``a`` answers 429 once, so the pool has a cooldown to show), sends requests through
both replicas, attaches the window to replica B and saves its Traffic tab (every flow
is there, whichever replica served it) and one flow A served, opened.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["STREAMSCOPE_DATA_DIR"] = tempfile.mkdtemp(prefix="streamscope-shots-")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from screenshots.regenerate import run_window, save, until  # noqa: E402
from tests.postgres import running  # noqa: E402
from tests.proxy.pool_support import error_script, keyed  # noqa: E402
from tests.replicas.support import ADMIN, replica, two_homes  # noqa: E402
from tests.upstream_server import run_in_thread  # noqa: E402

from streamscope.gui.theme import Theme  # noqa: E402
from streamscope.gui.window import MainWindow  # noqa: E402


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="streamscope-team-"))
    with run_in_thread() as up, running() as server:
        home_a, home_b = two_homes(tmp, server.new_database(), up)
        quota = error_script(429, "rate limit reached", **{"Retry-After": "600"})
        up.route("POST", "/v1/chat/completions", keyed({"a": quota}))
        with replica(home_a, "A") as a, replica(home_b, "B") as b:

            async def shots(window: MainWindow, _theme: Theme) -> None:
                assert await window.attach(b.url, ADMIN) is None
                try:
                    for r in (a, b, a, b, b):
                        await asyncio.to_thread(r.chat)
                    window.tabs.setCurrentWidget(window.traffic)
                    model = window.traffic.model
                    await until(lambda: model.rowCount() == 5)
                    await until(lambda: model.summary_at(0).verdict is not None)
                    await save(window, "team-attached")
                    oldest = model.summary_at(model.rowCount() - 1)  # a's 429, then b
                    detail = window.traffic.open_flow(oldest.id)
                    await until(lambda: detail.flow is not None)
                    await save(window, "team-flow")
                finally:
                    await window.detach()

            return run_window(shots)


if __name__ == "__main__":
    raise SystemExit(main())
