"""The SDK vocabulary table in pytest's terminal summary.

tests/codecs/test_vocabulary_sdk.py writes, per protocol and place, what the pinned SDK
defines and what the codec maps, carries, drops or does not know. The summary prints it
whatever the capture settings (``-s`` or not), so CI's log shows it on every run.
"""

from __future__ import annotations

import pytest

VOCABULARY_TABLE = pytest.StashKey[list[str]]()


@pytest.fixture
def vocabulary_table(request: pytest.FixtureRequest) -> list[str]:
    """Lines for the terminal summary's vocabulary table."""
    return request.config.stash.setdefault(VOCABULARY_TABLE, [])


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    lines = config.stash.get(VOCABULARY_TABLE, [])
    if lines:
        terminalreporter.write_sep("-", "SDK vocabulary: what each codec maps, carries and drops")
        for line in lines:
            terminalreporter.write_line(line)
