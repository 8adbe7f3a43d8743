"""The audit's battery: a fixed, small set of requests (probes) sent to a relay once each,
every one with a ``max_tokens``, built for the relay's protocol by the client pane's
composer (:mod:`streamscope.client.compose`), so each is exactly the body, URL and
headers that protocol's clients send.

====================  ======================================  ======  ==============================
id                    what it asks                            stream  what a correct answer holds
====================  ======================================  ======  ==============================
text-short            a five-word hello (no usage asked)      yes     some text; finish ``stop``
text-long             counting to sixty in words              yes     some text (a long stream)
tool-forced           ``get_weather`` forced by tool_choice   yes     one call of ``get_weather``
                                                                      with JSON object arguments
tools-parallel        weather in Paris and time in Tokyo, a   yes     two tool calls
                      tool required, parallel calls allowed
tool-no-args          ``get_server_time`` (no parameters),    yes     one call of it, arguments
                      forced                                          ``{}`` or empty
tool-result           the turn after a call: its result       yes     some text
reasoning             a small sum, reasoning asked (a         yes     some text; reasoning where
                      budget for Anthropic, ``low`` else)             the model offers it (none is
                                                                      no failure)
cut-max-tokens        a long essay, ``max_tokens`` 16         yes     some text; finish ``length``
usage                 a five-word hello, usage asked (Chat:   yes     usage (token counts)
                      ``stream_options.include_usage``)
text-short-whole      a five-word hello                       no      some text
tool-forced-whole     ``get_weather`` forced                  no      one call of ``get_weather``
cut-max-tokens-whole  a long essay, ``max_tokens`` 16         no      finish ``length``
bad-key               a hello with a key that is not the one  yes     the protocol's error
                      given (:data:`BAD_KEY`)                         envelope, HTTP 401 or 403
unknown-model         a hello to a model that cannot exist    yes     the protocol's error
                      (:data:`UNKNOWN_MODEL`)                         envelope, HTTP 400 or 404
====================  ======================================  ======  ==============================

The streamed probes ask for usage as the clients do (``include_usage``), but for
``text-short``, which asks for none: a relay that sends a usage chunk unasked shows
there. What the model chose to say (a call it did not make, a reasoning it did not show)
is said by :meth:`Probe.check` as a finding of no client: the clients' grades judge the
wire, not the model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from streamscope.client.compose import (
    WEATHER_TOOL,
    Composition,
    Params,
    ToolCall,
    ToolResult,
    Turn,
    check_protocol,
    headers,
    target_url,
    to_request,
)
from streamscope.codecs import get_codec
from streamscope.model.request import Request, ToolChoice
from streamscope.model.response import Response

JSON = dict[str, Any]
Kind = Literal["answer", "error"]

BAD_KEY = "sk-streamscope-audit-wrong-key-0000000000"
"""The key the bad-key probe sends instead of the one given: no relay issued it."""
UNKNOWN_MODEL = "streamscope-audit-no-such-model-7f3a9c"
"""The model the unknown-model probe asks for: no provider serves it."""

HELLO = "Say hello in five words."
TIME_TOOL: JSON = {
    "name": "get_time",
    "description": "The current local time in a time zone.",
    "parameters": {
        "type": "object",
        "properties": {"timezone": {"type": "string", "description": "IANA zone name"}},
        "required": ["timezone"],
    },
}
NO_ARGS_TOOL: JSON = {
    "name": "get_server_time",
    "description": "The server's current time. Takes no arguments.",
    "parameters": {"type": "object", "properties": {}},
}
CALL_ID = "call_audit_1"
ANTHROPIC_BUDGET = 1024  # the smallest thinking budget Anthropic takes


@dataclass(frozen=True)
class Probe:
    """One request of the battery: ``composition`` is its request (the target's URL and
    key left empty: :meth:`for_target` fills them), ``tool_choice`` what the composer
    cannot say (a forced or required tool), ``kind`` ``error`` for the probes whose
    answer is an error envelope (``statuses``: the statuses that are right for it).
    ``own_key``: the probe sends :data:`BAD_KEY`, not the target's."""

    id: str
    title: str
    stream: bool
    composition: Composition
    expects: str  # what a correct answer holds, in words
    tool_choice: ToolChoice | None = None
    kind: Kind = "answer"
    statuses: tuple[int, ...] = ()
    own_key: bool = False
    optional: bool = False  # an error answer to it is no client's breakage (reasoning)
    expect_tools: tuple[str, ...] = field(default=())
    expect_finish: str | None = None
    expect_usage: bool = False

    def for_target(self, url: str, key: str) -> Composition:
        """The probe's composition aimed at ``url``, with ``key`` (or :data:`BAD_KEY`)."""
        return replace(self.composition, url=url, key=BAD_KEY if self.own_key else key)

    def request(self) -> Request:
        """The canonical request (the tool choice set)."""
        request = to_request(self.composition)
        if self.tool_choice is not None:
            request = replace(request, tool_choice=self.tool_choice)
        return request

    def body(self) -> JSON:
        """The body exactly as the protocol's clients send it (as compose.body, with the
        tool choice the composer has no field for)."""
        codec = get_codec(self.composition.protocol)
        request = self.request()
        encoded = codec.encode_request(request)
        carried = encoded if "model" in encoded else {**encoded, "model": request.model}
        return codec.call(carried, request.stream)[1]

    def url(self, base: str) -> str:
        return target_url(self.for_target(base, ""))

    def headers(self, key: str) -> dict[str, str]:
        return headers(self.for_target("http://x", key))

    def check(self, response: Response | None) -> list[str]:
        """What the answer lacks of what a correct one holds (empty: nothing). Only for
        answers; the error probes are judged by their status and envelope."""
        if self.kind == "error" or response is None:
            return []
        choice = response.choices[0] if response.choices else None
        calls = choice.tool_calls if choice is not None else []
        out: list[str] = []
        if self.expect_tools:
            names = [c.name for c in calls]
            if len(calls) < len(self.expect_tools):
                out.append(
                    f"asked for {len(self.expect_tools)} tool call(s) "
                    f"({', '.join(self.expect_tools)}), got {len(calls)}"
                    + (f" ({', '.join(map(str, names))})" if names else "")
                )
            elif len(self.expect_tools) == 1 and names[0] != self.expect_tools[0]:
                out.append(f"asked for a call of {self.expect_tools[0]}, got {names[0]}")
            for call in calls:
                problem = _arguments_problem(call.arguments or "")
                if problem:
                    out.append(f"the call of {call.name}: {problem}")
        elif not (choice is not None and (choice.text or choice.refusal)):
            out.append("no text in the answer")
        if self.expect_finish and (choice is None or choice.finish != self.expect_finish):
            got = choice.finish if choice is not None else None
            out.append(f"finish {got or '(none)'}, expected {self.expect_finish}")
        if self.expect_usage and response.usage is None:
            out.append("no usage, though it was asked for")
        return out


def _arguments_problem(text: str) -> str | None:
    if not text.strip():
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return "its arguments are not JSON"
    return None if isinstance(value, dict) else "its arguments are not a JSON object"


def battery(protocol: str, model: str) -> list[Probe]:
    """The fixed battery (see the module docstring) for ``protocol`` and ``model``;
    ``ValueError`` for an unknown protocol or an empty model."""
    check_protocol(protocol)
    if not model.strip():
        raise ValueError("model is required")

    def comp(
        turns: list[Turn | tuple[str, str]],
        *,
        stream: bool = True,
        max_tokens: int = 200,
        tools: list[JSON] | None = None,
        usage: bool = True,
        reasoning: str | int | None = None,
        model_name: str = model,
    ) -> Composition:
        params = Params(
            stream=stream, include_usage=usage, max_tokens=max_tokens, reasoning=reasoning
        )
        if protocol == "responses":
            # Responses takes a function tool as strict when it does not say (and its SDK's
            # type requires the field): these schemas are not written for strict mode.
            tools = [{**t, "strict": False} for t in tools or []]
        return Composition("", protocol, model_name, turns=turns, tools=tools or [], params=params)

    hello: list[Turn | tuple[str, str]] = [("user", HELLO)]
    weather: list[Turn | tuple[str, str]] = [("user", "What is the weather in Lyon right now?")]
    essay: list[Turn | tuple[str, str]] = [
        ("user", "Write a long essay on the history of the bicycle.")
    ]
    forced = ToolChoice("tool", "get_weather")
    # Anthropic takes a thinking budget (and max_tokens above it); the others an effort.
    anthropic = protocol == "anthropic"
    reasoning: str | int = ANTHROPIC_BUDGET if anthropic else "low"
    reasoning_tokens = ANTHROPIC_BUDGET + 600 if anthropic else 600
    called: list[Turn | tuple[str, str]] = [
        ("user", "What is the weather in Lyon right now?"),
        Turn("assistant", tool_calls=[ToolCall(CALL_ID, "get_weather", '{"location": "Lyon"}')]),
        Turn("tool", tool_results=[ToolResult(CALL_ID, '{"temperature_c": 18, "sky": "clear"}')]),
    ]
    return [
        Probe(
            "text-short",
            "short text",
            True,
            comp(hello, max_tokens=64, usage=False),
            "some text; finish stop",
            expect_finish="stop",
        ),
        Probe(
            "text-long",
            "long text",
            True,
            comp(
                [("user", "Count from one to sixty in words, one number per line.")],
                max_tokens=600,
            ),
            "some text (a long stream)",
        ),
        Probe(
            "tool-forced",
            "forced tool call",
            True,
            comp(weather, tools=[WEATHER_TOOL]),
            "one call of get_weather with JSON object arguments",
            tool_choice=forced,
            expect_tools=("get_weather",),
        ),
        Probe(
            "tools-parallel",
            "two parallel tool calls",
            True,
            comp(
                [("user", "What is the weather in Paris, and what time is it in Tokyo?")],
                tools=[WEATHER_TOOL, TIME_TOOL],
                max_tokens=300,
            ),
            "two tool calls",
            tool_choice=ToolChoice("required", parallel=True),
            expect_tools=("get_weather", "get_time"),
        ),
        Probe(
            "tool-no-args",
            "tool with no arguments",
            True,
            comp([("user", "What time is it on the server?")], tools=[NO_ARGS_TOOL]),
            "one call of get_server_time, arguments {} or empty",
            tool_choice=ToolChoice("tool", "get_server_time"),
            expect_tools=("get_server_time",),
        ),
        Probe(
            "tool-result",
            "tool result turn",
            True,
            comp(called, tools=[WEATHER_TOOL]),
            "some text",
        ),
        Probe(
            "reasoning",
            "reasoning",
            True,
            comp(
                [("user", "What is 17 times 23? Answer with the number.")],
                max_tokens=reasoning_tokens,
                reasoning=reasoning,
            ),
            "some text; reasoning where the model offers it",
            optional=True,
        ),
        Probe(
            "cut-max-tokens",
            "cut by max_tokens",
            True,
            comp(essay, max_tokens=16),
            "some text; finish length",
            expect_finish="length",
        ),
        Probe(
            "usage",
            "usage requested",
            True,
            comp(hello, max_tokens=64),
            "usage (token counts)",
            expect_usage=True,
        ),
        Probe(
            "text-short-whole",
            "short text, not streamed",
            False,
            comp(hello, stream=False, max_tokens=64),
            "some text",
        ),
        Probe(
            "tool-forced-whole",
            "forced tool call, not streamed",
            False,
            comp(weather, stream=False, tools=[WEATHER_TOOL]),
            "one call of get_weather",
            tool_choice=forced,
            expect_tools=("get_weather",),
        ),
        Probe(
            "cut-max-tokens-whole",
            "cut by max_tokens, not streamed",
            False,
            comp(essay, stream=False, max_tokens=16),
            "finish length",
            expect_finish="length",
        ),
        Probe(
            "bad-key",
            "bad key",
            True,
            comp(hello, max_tokens=16),
            "the protocol's error envelope, HTTP 401 or 403",
            kind="error",
            statuses=(401, 403),
            own_key=True,
        ),
        Probe(
            "unknown-model",
            "unknown model",
            True,
            comp(hello, max_tokens=16, model_name=UNKNOWN_MODEL),
            "the protocol's error envelope, HTTP 400 or 404",
            kind="error",
            statuses=(400, 404),
        ),
    ]


__all__ = ["BAD_KEY", "UNKNOWN_MODEL", "Probe", "battery"]
