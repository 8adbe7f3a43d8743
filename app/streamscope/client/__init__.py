"""The client pane's core: compose a request, send it (or replay a captured leg), and
watch its stream — frames, canonical events, tool calls — in batches, with no Qt.

- :mod:`streamscope.client.compose`: what the user composed -> the canonical request and
  the protocol's exact body and headers;
- :mod:`streamscope.client.tools`: tool calls followed fragment by fragment;
- :mod:`streamscope.client.feed`: the per-frame path (decode, assemble, track) and the
  batches it reports;
- :mod:`streamscope.client.session`: one request over httpx, or a replay of a leg, with
  the callbacks it reports to and its limits;
- :mod:`streamscope.client.result`: what a session ends with (:class:`ClientResult`).
"""

from streamscope.client.compose import (
    WEATHER_TOOL,
    WEATHER_TOOLS_JSON,
    Composition,
    Params,
    ToolCall,
    ToolResult,
    Turn,
    body,
    headers,
    parse_tools,
    sdk_base_url,
    target_url,
    to_request,
    with_tool_results,
)
from streamscope.client.feed import NO_FRAME
from streamscope.client.session import (
    ClientResult,
    ClientSession,
    Replay,
    SessionCallbacks,
    SessionLimits,
    replay_session,
)
from streamscope.client.tools import Fragment, ToolCallEntry, ToolCallTracker

__all__ = [
    "NO_FRAME",
    "WEATHER_TOOL",
    "WEATHER_TOOLS_JSON",
    "ClientResult",
    "ClientSession",
    "Composition",
    "Fragment",
    "Params",
    "Replay",
    "SessionCallbacks",
    "SessionLimits",
    "ToolCall",
    "ToolCallEntry",
    "ToolCallTracker",
    "ToolResult",
    "Turn",
    "body",
    "headers",
    "parse_tools",
    "replay_session",
    "sdk_base_url",
    "target_url",
    "to_request",
    "with_tool_results",
]
