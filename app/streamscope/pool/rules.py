"""How an upstream failure is classified: a table of rules, read top to bottom.

The first rule that matches a failure names its class and says what the proxy does:

    action    what happens
    return    the upstream's error goes to the client at once; no account is at fault
    next      the next account is tried; this one stays active
    disable   the next account is tried; this one is switched off: cooling until the
              upstream's ``Retry-After`` (when the rule honours it) or the rule's
              ``cooldown_seconds``, else disabled until someone re-enables it

A rule matches an HTTP error when its ``status`` list holds the status (an empty list
matches any status of 400 and up) and, when ``body`` is given, the response body contains
one of its strings (case-insensitive). A rule with ``network = true`` matches only a
failure with no HTTP answer at all: connection refused or reset, or a timeout before the
first byte. A failure no rule matches is ``upstream_error`` and is returned to the client.

Users put their own rules in the config (``[[pool.rules]]``); they are read before these
defaults, so a user rule can refine or override any of them.
"""

from __future__ import annotations

import datetime
import email.utils
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from streamscope.config import NETWORK_STATUS, Action, PoolConfig, Rule

UNMATCHED = "upstream_error"


def _rule(**kw: object) -> Rule:
    return Rule.model_validate(kw)


DEFAULT_RULES: tuple[Rule, ...] = (
    _rule(**{"class": "too_large"}, status=[413], action="return"),
    _rule(**{"class": "too_large"}, status=[403], body=["estimated cost"], action="return"),
    _rule(
        **{"class": "insufficient_tokens"},
        status=[403],
        body=["insufficient tokens", "upgrade your plan", "limit reached"],
        action="next",
    ),
    _rule(**{"class": "exhausted"}, status=[429, 402], action="disable"),
    _rule(**{"class": "invalid_credential"}, status=[401], action="disable", retry_after=False),
    _rule(**{"class": "network"}, network=True, action="next"),
)


def rule_table(pool: PoolConfig) -> tuple[Rule, ...]:
    """The table the pool reads: the config's ``[[pool.rules]]`` first, then the
    defaults (the one place the two are put together: the pool and the doctor read it)."""
    return (*pool.rules, *DEFAULT_RULES)


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a failure is and what to do about it."""

    failure_class: str
    action: Action
    rule: Rule | None  # None: no rule matched
    cooldown: float | None = None  # seconds of cooling for ``disable``; None: disabled

    @property
    def disables(self) -> bool:
        return self.action == "disable"


def classify(
    rules: Sequence[Rule],
    status: int,
    body: bytes | str = b"",
    headers: Mapping[str, str] | None = None,
    now: float | None = None,
) -> Verdict:
    """The verdict of the first matching rule (``status`` 0: a network failure)."""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    lower = text.lower()
    for rule in rules:
        if rule.matches(status, lower):
            cooldown = None
            if rule.action == "disable":
                if rule.retry_after and headers is not None:
                    cooldown = retry_after_seconds(_header(headers, "retry-after"), now)
                if cooldown is None:
                    cooldown = rule.cooldown_seconds
            return Verdict(rule.failure_class, rule.action, rule, cooldown)
    return Verdict(UNMATCHED, "return", None)


def _header(headers: Mapping[str, str], name: str) -> str | None:
    found = headers.get(name)  # httpx.Headers: case-insensitive already
    if found is None:
        found = next((v for k, v in headers.items() if k.lower() == name), None)
    return found


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds from now: delta-seconds or an HTTP date (RFC 9110)."""
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # delta-seconds is digits only (RFC 9110)
        seconds = float(value)
    else:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # asctime and "-0000": HTTP dates are always UTC
            when = when.replace(tzinfo=datetime.UTC)
        seconds = when.timestamp() - (time.time() if now is None else now)
    if not math.isfinite(seconds):
        return None
    # A date in the past or 0 still means "not right now": a second's cooling.
    return max(seconds, 1.0)


__all__ = [
    "DEFAULT_RULES",
    "NETWORK_STATUS",
    "UNMATCHED",
    "Action",
    "Rule",
    "Verdict",
    "classify",
    "retry_after_seconds",
    "rule_table",
]
