"""What a flow looks like to someone reading it: the stored flow plus the views computed
from its frames — each leg's decoded canonical events (with the frame each came from)
and its timing. Raw bytes stay the source; this is derived.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from streamscope.capture.flow import Flow, Leg
from streamscope.capture.sse import leg_frames
from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.timing import leg_timing, proxy_overhead_ms

JSON = dict[str, Any]


def leg_events(leg: Leg) -> list[JSON]:
    """The leg's canonical events, each with the index of the frame it came from."""
    if leg.protocol not in PROTOCOLS or not leg.streamed:
        return []
    decoder = get_codec(leg.protocol).stream_decoder()
    out: list[JSON] = []
    for index, (_, frame) in enumerate(leg_frames(leg)):
        for ev in decoder.decode(frame):
            out.append({"frame": index, **dataclasses.asdict(ev)})
    for ev in decoder.finish():
        out.append({"frame": None, **dataclasses.asdict(ev)})
    return out


def flow_view(flow: Flow) -> JSON:
    """The flow as the admin API shows it: stored data plus, per leg, its events and
    timing, and the proxy's own overhead (client first frame minus upstream first)."""
    data = flow.to_json()
    for name, leg in (("upstream", flow.upstream), ("client", flow.client)):
        data["legs"][name]["events"] = leg_events(leg)
        data["legs"][name]["timing"] = leg_timing(leg).to_json()
    data["proxy_overhead_ms"] = proxy_overhead_ms(flow)
    return data


__all__ = ["flow_view", "leg_events"]
