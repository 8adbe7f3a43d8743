"""What the pool knows about each account, and what it records of each attempt.

Times are wall-clock seconds (``time.time()``): they are persisted and shown, and a
cooldown must end at the same moment after a restart. Messages are stored redacted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import TypeAdapter

Status = Literal["active", "cooling", "disabled"]

MANUAL = "disabled by the user"


@dataclass(slots=True)
class AccountState:
    status: Status = "active"
    until: float | None = None  # when cooling ends
    reason: str | None = None  # why it is cooling or disabled
    disabled_by: str | None = None  # the failure class that switched it off, or "user"
    requests: int = 0  # attempts made with this account
    successes: int = 0  # attempts the upstream accepted (2xx)
    failures: dict[str, int] = field(default_factory=dict)  # by failure class
    last_error: str | None = None
    last_error_at: float | None = None
    last_used: float | None = None
    tokens_used: int = 0
    balance: float | None = None

    def available(self, now: float) -> bool:
        if self.status == "active":
            return True
        return self.status == "cooling" and self.until is not None and self.until <= now

    def to_json(self) -> dict[str, Any]:
        # (field by field, not dataclasses.asdict: the feed says a state several times a
        # request, and asdict's deep copy was most of that)
        return {
            "status": self.status,
            "until": self.until,
            "reason": self.reason,
            "disabled_by": self.disabled_by,
            "requests": self.requests,
            "successes": self.successes,
            "failures": dict(self.failures),
            "last_error": self.last_error,
            "last_error_at": self.last_error_at,
            "last_used": self.last_used,
            "tokens_used": self.tokens_used,
            "balance": self.balance,
        }

    @classmethod
    def from_json(cls, data: Any) -> AccountState:
        """Raises ValueError or TypeError for anything that is not a sound state."""
        if not isinstance(data, dict):
            raise TypeError("an account state is a JSON object")
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        if known.get("status") not in ("active", "cooling", "disabled"):
            known["status"] = "active"
        state = _ADAPTER.validate_python(known)
        if state.status == "cooling" and state.until is None:
            raise ValueError("a cooling account needs its end time")
        return state


_ADAPTER = TypeAdapter(AccountState)


@dataclass(frozen=True, slots=True)
class Attempt:
    """One try of one account for one request: which rule fired, on which account."""

    request_id: str
    upstream: str
    account: str | None  # None: an upstream without accounts
    failure_class: str  # "ok" for an accepted answer
    action: str  # "use", "return", "next", "disable" or "cool <seconds> s" (a cooldown)
    status: int  # HTTP status; 0 when there was no HTTP answer
    at: float
    message: str = ""  # redacted

    def to_json(self) -> dict[str, Any]:
        return {
            "request_id": self.request_id,
            "upstream": self.upstream,
            "account": self.account,
            "failure_class": self.failure_class,
            "action": self.action,
            "status": self.status,
            "at": self.at,
            "message": self.message,
        }

    def short(self) -> str:
        return f"{self.account or '-'}:{self.failure_class}/{self.status}"


__all__ = ["MANUAL", "AccountState", "Attempt", "Status"]
