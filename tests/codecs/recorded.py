"""Every JSON payload of the recordings, with the protocol it was recorded in and its
``event:`` name: what each codec's ``sniff`` and ``preview`` are checked against."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from tests.support import fixture_files, load

JSON = dict[str, Any]


@cache
def recorded_payloads() -> tuple[tuple[str, JSON, str | None], ...]:
    """(protocol, payload, event) of every frame whose data is a JSON object."""
    out = []
    for path in fixture_files():
        rec = load(path)
        for frame in rec.frames:
            try:
                payload = json.loads(frame.data or "")
            except ValueError:
                continue
            if isinstance(payload, dict):
                out.append((rec.protocol, payload, frame.event))
    return tuple(out)


def payloads_of(protocol: str) -> list[tuple[JSON, str | None]]:
    return [(p, event) for name, p, event in recorded_payloads() if name == protocol]
