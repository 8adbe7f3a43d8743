"""Shared builders for the account-pool tests: configs with accounts, and a fake clock."""

from __future__ import annotations

from streamscope.config import Config, parse_config
from tests import support

T0 = 1_700_000_000.0  # a fixed wall-clock start for fake clocks


def key(n: int) -> str:
    """A realistic, distinct account key (long enough to be redacted)."""
    return f"sk-proj-{n:02d}Qx7Lm2Vb9Rt4Kp8Zs3Wd6Hn1Jc5Fg0YeUaIoTrEw{n:02d}Zq"


def make_config(
    n: int = 3,
    *,
    strategy: str = "lru",
    weights: list[float] | None = None,
    balances: list[float | None] | None = None,
    keys: list[str] | None = None,
    pool_toml: str = "",
    upstream: str = "oa",
) -> Config:
    """One openai upstream with ``n`` unnamed accounts (so named account1..accountN)."""
    keys = keys or [key(i + 1) for i in range(n)]
    lines = [
        pool_toml,
        "[[upstreams]]",
        f'name = "{upstream}"',
        'protocol = "openai-chat"',
        'base_url = "https://api.example.test/v1"',
        f'strategy = "{strategy}"',
    ]
    for i, k in enumerate(keys):
        lines += ["[[upstreams.accounts]]", f'api_key = "{k}"']
        if weights is not None:
            lines.append(f"weight = {weights[i]}")
        if balances is not None and balances[i] is not None:
            lines.append(f"balance = {balances[i]}")
    return parse_config("\n".join(lines) + "\n")


class Clock(support.Clock):
    """A wall clock the test moves by hand, starting at :data:`T0`."""

    def __init__(self, start: float = T0) -> None:
        super().__init__(start)
