"""What a flow looks like to someone reading it: the stored flow plus the views computed
from its frames — each leg's decoded canonical events (with the frame each came from)
and the findings of its protocol's decoder. Raw bytes stay the source; this is derived.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from streamscope.capture.flow import Flow, Leg
from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.wire import SSEDecoder

JSON = dict[str, Any]


def leg_events(leg: Leg) -> list[JSON]:
    """The leg's canonical events, each with the index of the frame it came from."""
    if leg.protocol not in PROTOCOLS or not leg.frames:
        return []
    decoder = get_codec(leg.protocol).stream_decoder()
    wire = SSEDecoder()
    out: list[JSON] = []
    for index, captured in enumerate(leg.frames):
        for frame in wire.feed(captured.raw, captured.t_ns):
            for ev in decoder.decode(frame):
                out.append({"frame": index, **dataclasses.asdict(ev)})
    for ev in decoder.finish():
        out.append({"frame": None, **dataclasses.asdict(ev)})
    return out


def flow_view(flow: Flow) -> JSON:
    """The flow as the admin API shows it: stored data plus each leg's events."""
    data = flow.to_json()
    for name, leg in (("upstream", flow.upstream), ("client", flow.client)):
        data["legs"][name]["events"] = leg_events(leg)
    return data


__all__ = ["flow_view", "leg_events"]
