"""One request as the proxy serves it: :class:`Exchange`.

The app makes one per request; the exchange (``proxy.exchange``), the account loop
(``proxy.attempts``) and the relay (``proxy.relay``) fill it in. What becomes the flow's
record (model, route, account, mode, attempts, outcome, time to first token, tokens,
the request's translation notes) is filled straight into its
:class:`~streamscope.capture.info.FlowInfo`, the one record the store keeps of those
facts: nothing is copied from the exchange when the request ends.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from streamscope.capture.info import FlowInfo
from streamscope.proxy.tap import NULL_TAP, FlowTap


@dataclass(slots=True)
class Exchange:
    """One request: what its log line says (never a key), its flow's record (``info``;
    its outcome None: not a flow's end, as a refusal, the admin API, a model listing),
    and the tap it tells each moment of the flow (:mod:`~streamscope.proxy.tap`: the
    capture's recorder, or no one)."""

    request_id: str
    method: str
    path: str
    started: float = field(default_factory=time.monotonic)
    status: int = 0
    refused: str | None = None  # turned away at the door (not a flow): the reason
    answered: bool = False  # the client has its whole answer (stream terminated or body)
    info: FlowInfo = field(default_factory=FlowInfo)
    tap: FlowTap = NULL_TAP  # told each moment of the flow (capture's recorder, or no one)

    def line(self) -> str:
        info = self.info
        ttft = f"{info.ttft_ms:.0f}ms" if info.ttft_ms is not None else "-"
        dur = (time.monotonic() - self.started) * 1000
        parts = [
            f"{self.method} {self.path}",
            f"model={info.model or '-'}",
            f"upstream={info.upstream or '-'}",
            f"account={info.account or '-'}",
            f"status={self.status}",
            f"ttft={ttft}",
            f"duration={dur:.0f}ms",
        ]
        attempts = info.attempts
        if len(attempts) > 1 or any(a.failure_class != "ok" for a in attempts):
            parts.append("attempts=" + ",".join(a.short() for a in attempts))
        if self.refused is not None:
            parts.append(f"refused={self.refused}")
        if info.outcome is not None:
            parts.append(f"outcome={info.outcome}")
            if info.outcome_detail:
                parts.append(f"detail={json.dumps(info.outcome_detail, ensure_ascii=False)}")
        return " ".join(parts)


__all__ = ["Exchange"]
