"""What an agent CLI assembled, read from its machine-readable output.

Three shapes cover the four CLIs:

- **stream-json** (Claude Code's ``-p --output-format stream-json --verbose``, and Qwen
  Code's, which follows it): one JSON object a line. ``assistant`` lines carry a message
  whose content blocks are ``text``, ``thinking`` and ``tool_use``; ``user`` lines carry
  the ``tool_result`` blocks the CLI made by running the tools; the closing ``result``
  line has the final text (``result``), or ``is_error`` with the error (``result`` for
  Claude Code, ``error.message`` for Qwen Code). An API error the CLI turned into an
  assistant message (Claude Code: ``is_api_error_message``) is the error, not the text.
  Lines of a sub-agent (``parent_tool_use_id`` set) are left out: the run's own turn is
  what the client assembled.
- **Codex** (``codex exec --json``): ``item.completed`` lines with an ``agent_message``
  (text), ``reasoning``, ``command_execution`` or ``mcp_tool_call`` item, a non-fatal
  ``error`` item (a notice: "Model metadata ... not found"), ``turn.failed`` or
  ``error`` for a failure. Function calls of its own tools (``get_goal``) are not items,
  so they are read from the session file Codex writes in its home
  (``sessions/.../rollout-*.jsonl``: ``response_item`` lines with ``function_call`` and
  ``function_call_output``).
- **Gemini CLI** (``gemini -p --output-format stream-json``, its own shape, as run):
  ``message`` lines (``role`` assistant, ``delta`` text pieces); ``tool_use`` (``tool_id``
  ``<name>__<the call's id>``, an id it made up when the stream gave none; ``tool_name``,
  ``parameters``); ``tool_result`` (``status`` ``error`` and the error as ``output`` for
  a failed call; a call that ran has no output, or an empty one: what a tool returned is
  not printed); ``error`` (severity ``warning``: "Loop detected, stopping execution", a
  notice; severity ``error``: "Model stream ended without a finish reason."); and a
  closing ``result`` whose ``status`` is ``error`` when the run failed, with
  ``error.message`` when the CLI gave one (``FatalTurnLimitedError``: the run's turn
  limit), and ``stats`` (the usage). No line says where an answer starts: one starts at
  the first assistant line after a tool result, and the text is the last answer's.
  Thought parts are never printed, so no reasoning is read.

The usage a run reports (``Assembled.usage``, input and output tokens) is the closing
``result`` line's (Gemini CLI's ``result.stats``), else the last answer's (a run ended at
its turn limit has no ``result``), Codex's ``turn.completed``, else its session file's
last ``token_usage_record`` (a run ended by ``run_agent`` has no ``turn.completed``). The CLIs
count what no stream sent as 0, so a run reports usage whenever it read an answer.

The readers are tolerant: a line that is not JSON, or not the shape expected, is skipped
and counted, never raised.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call the model made and the CLI saw: its id, name and arguments (JSON
    text, as the CLI reports them)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What the CLI sent back for a call after running the tool."""

    call_id: str
    text: str
    is_error: bool = False


@dataclass(slots=True)
class Assembled:
    """What a run of an agent CLI assembled: the final text, the reasoning it showed, the
    tool calls and their results, the error it ended with (None: it answered), notices
    it printed on the way (retries, warnings), how many model answers it read, whether
    it stopped at its turn limit (with tool calls it would have sent results of) and how
    many output lines it could not read."""

    text: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_results: list[ToolResult] = field(default_factory=list)
    error: str | None = None
    notices: list[str] = field(default_factory=list)
    answers: int = 0
    turn_limit: bool = False
    unreadable: int = 0
    usage: tuple[int | None, int | None] | None = None


def _lines(text: str, out: Assembled) -> Iterable[JSON]:
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            out.unreadable += 1
            continue
        if isinstance(item, dict):
            yield item
        else:
            out.unreadable += 1


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _content_text(content: Any) -> str:
    """A tool result's content: a string, or blocks of which the text ones count."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            _str(b.get("text")) for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _arguments(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _usage(value: Any) -> tuple[int | None, int | None] | None:
    """``(input_tokens, output_tokens)`` of a usage object, or None (not an object)."""
    if not isinstance(value, dict):
        return None
    got = value.get("input_tokens"), value.get("output_tokens")
    return (
        got[0] if isinstance(got[0], int) else None,
        got[1] if isinstance(got[1], int) else None,
    )


def read_stream_json(stdout: str) -> Assembled:
    """Claude Code's and Qwen Code's ``stream-json`` output."""
    out = Assembled()
    last_id: str | None = None
    last_text: list[str] = []
    final: str | None = None
    answer_usage: tuple[int | None, int | None] | None = None
    for line in _lines(stdout, out):
        kind = line.get("type")
        if line.get("parent_tool_use_id"):
            continue  # a sub-agent's line
        message = line.get("message")
        blocks = message.get("content") if isinstance(message, dict) else None
        blocks = [b for b in blocks if isinstance(b, dict)] if isinstance(blocks, list) else []
        if kind == "assistant" and isinstance(message, dict):
            texts = [_str(b.get("text")) for b in blocks if b.get("type") == "text"]
            if line.get("is_api_error_message") or message.get("model") == "<synthetic>":
                out.error = "".join(texts) or _str(line.get("error")) or "API error"
                continue
            ident = _str(message.get("id"))
            if ident != last_id:  # a CLI prints one line per block of the same answer
                out.answers += 1
                last_id, last_text = ident, []
            last_text += texts
            answer_usage = _usage(message.get("usage")) or answer_usage
            for b in blocks:
                if b.get("type") == "thinking":
                    out.reasoning += _str(b.get("thinking"))
                elif b.get("type") == "tool_use":
                    call = ToolCall(
                        _str(b.get("id")), _str(b.get("name")), _arguments(b.get("input"))
                    )
                    out.tool_calls.append(call)
        elif kind == "user":
            for b in blocks:
                if b.get("type") == "tool_result":
                    result = ToolResult(
                        _str(b.get("tool_use_id")),
                        _content_text(b.get("content")),
                        b.get("is_error") is True,
                    )
                    out.tool_results.append(result)
        elif kind == "system" and line.get("subtype") in ("api_retry", "retry"):
            out.notices.append(f"retry: {json.dumps(line.get('error') or line.get('data'))}")
        elif kind == "result":
            out.usage = _usage(line.get("usage")) or out.usage
            if line.get("subtype") == "error_max_turns":
                out.turn_limit = True  # the run's own limit, not the stream's doing
            elif line.get("is_error"):
                error = line.get("error")
                said = _str(error.get("message")) if isinstance(error, dict) else _str(error)
                out.error = said or _str(line.get("result")) or out.error or "error"
            else:
                final = _str(line.get("result"))
    out.text = final if final is not None else "".join(last_text)
    out.usage = out.usage or answer_usage
    return out


GEMINI_TURN_LIMIT_ERROR = "FatalTurnLimitedError"  # Gemini CLI's result at maxSessionTurns


def read_gemini(stdout: str) -> Assembled:
    """Gemini CLI's ``stream-json`` output."""
    out = Assembled()
    in_answer = False
    text: list[str] = []
    failed: str | None = None  # what an ``error`` line said
    ids: dict[str, str] = {}  # the printed tool_id (``<name>__<id>``) -> the call's id
    for line in _lines(stdout, out):
        kind = line.get("type")
        if (kind == "message" and line.get("role") == "assistant") or kind == "tool_use":
            if not in_answer:
                out.answers, in_answer, text = out.answers + 1, True, []
            if kind == "message":
                text.append(_str(line.get("content")))
            else:
                name, printed = _str(line.get("tool_name")), _str(line.get("tool_id"))
                ids[printed] = printed.removeprefix(name + "__")  # the call's own id
                call = ToolCall(ids[printed], name, _arguments(line.get("parameters", {})))
                out.tool_calls.append(call)
        elif kind == "tool_result":
            in_answer = False
            output = line.get("output")  # none when the tool succeeded (read_file: "")
            printed = _str(line.get("tool_id"))
            result = ToolResult(
                ids.get(printed, printed),
                output if isinstance(output, str) else "" if output is None else _arguments(output),
                line.get("status") == "error",
            )
            out.tool_results.append(result)
        elif kind == "error":
            said = _str(line.get("message"))
            if line.get("severity") == "error":
                failed = said or "error"
            else:
                out.notices.append(said)
        elif kind == "result":
            stats = line.get("stats")
            out.usage = _usage(stats) or out.usage
            error = line.get("error")
            error = error if isinstance(error, dict) else {}
            if error.get("type") == GEMINI_TURN_LIMIT_ERROR:
                out.turn_limit = True  # the run's own limit, not the stream's doing
            elif line.get("status") == "error":
                out.error = _str(error.get("message")) or failed or "error"
    out.text = "".join(text)
    if out.error is None and failed is not None and not out.turn_limit:
        out.error = failed  # no result line: the CLI ended on its error
    return out


def read_codex(stdout: str, rollout: str = "", max_turns: int | None = None) -> Assembled:
    """Codex's ``exec --json`` output, and its session file (``rollout``) for the
    function calls that are not items, up to the ``max_turns``-th answer."""
    out = Assembled()
    for line in _lines(stdout, out):
        kind = line.get("type")
        item = line.get("item")
        if kind == "item.completed" and isinstance(item, dict):
            _codex_item(item, out)
        elif kind == "turn.completed":
            out.usage = _usage(line.get("usage")) or out.usage
        elif kind == "turn.failed":
            error = line.get("error")
            out.error = _str(error.get("message")) if isinstance(error, dict) else "turn failed"
        elif kind == "error":
            out.error = _str(line.get("message")) or "error"
    calls, results = _codex_rollout(rollout, out, max_turns) if rollout else ([], [])
    seen = {c.id for c in out.tool_calls}
    out.tool_calls += [c for c in calls if c.id not in seen]
    done = {r.call_id for r in out.tool_results}
    out.tool_results += [r for r in results if r.call_id not in done]
    return out


def _codex_item(item: JSON, out: Assembled) -> None:
    match item.get("type"):
        case "agent_message":
            out.answers += 1
            out.text = _str(item.get("text"))
        case "reasoning":
            out.reasoning += _str(item.get("text"))
        case "command_execution":
            ident = _str(item.get("id"))
            command = json.dumps({"command": _str(item.get("command"))})
            out.tool_calls.append(ToolCall(ident, "command_execution", command))
            failed = item.get("exit_code") not in (0, None) or item.get("status") == "failed"
            out.tool_results.append(ToolResult(ident, _str(item.get("aggregated_output")), failed))
        case "mcp_tool_call":
            ident = _str(item.get("id"))
            name = f"{_str(item.get('server'))}.{_str(item.get('tool'))}"
            out.tool_calls.append(ToolCall(ident, name, _arguments(item.get("arguments"))))
            error = item.get("error")
            text = _arguments(error if error else item.get("result"))
            out.tool_results.append(ToolResult(ident, text, bool(error)))
        case "error":
            out.notices.append(_str(item.get("message")))
        case _:
            pass


OUTPUTS = ("function_call_output", "custom_tool_call_output")


def codex_output_batches(rollout: str) -> int:
    """How many batches of tool results a Codex session file holds: each follows one
    answer that called tools, and Codex asks the model again after it."""
    batches, in_batch = 0, False
    for line in _lines(rollout, Assembled()):
        payload = line.get("payload")
        if line.get("type") != "response_item" or not isinstance(payload, dict):
            continue
        output = payload.get("type") in OUTPUTS
        batches += output and not in_batch
        in_batch = output
    return batches


def codex_asked_again(rollout: str, max_turns: int) -> bool:
    """Whether a Codex session file shows an answer after the results of its
    ``max_turns``-th answer that called tools: it asked again, so that answer is over
    (one that failed after its call ran, ``response.incomplete``, shows none)."""
    batches, in_batch = 0, False
    for line in _lines(rollout, Assembled()):
        payload = line.get("payload")
        if line.get("type") != "response_item" or not isinstance(payload, dict):
            continue
        output = payload.get("type") in OUTPUTS
        if in_batch and not output and batches >= max_turns:
            return True
        batches += output and not in_batch
        in_batch = output
    return False


def _codex_rollout(
    rollout: str, out: Assembled, max_turns: int | None
) -> tuple[list[ToolCall], list[ToolResult]]:
    calls: list[ToolCall] = []
    results: list[ToolResult] = []
    batches, in_batch = 0, False
    scratch = Assembled()  # a session file's odd lines are not the run's output
    recorded: tuple[int | None, int | None] | None = None
    for line in _lines(rollout, scratch):
        payload = line.get("payload")
        if line.get("type") == "token_usage_record" and isinstance(payload, dict):
            recorded = _usage(payload.get("usage")) or recorded
            continue
        if line.get("type") != "response_item" or not isinstance(payload, dict):
            continue
        kind = payload.get("type")
        if in_batch and kind not in OUTPUTS:
            in_batch = False
            if max_turns is not None and batches >= max_turns:
                out.turn_limit = True  # what follows is an answer past the limit
                break
        if kind in OUTPUTS and not in_batch:
            batches, in_batch = batches + 1, True
        if kind in ("function_call", "custom_tool_call"):
            arguments = payload.get("arguments", payload.get("input"))
            calls.append(
                ToolCall(
                    _str(payload.get("call_id")), _str(payload.get("name")), _arguments(arguments)
                )
            )
        elif kind in ("function_call_output", "custom_tool_call_output"):
            output = payload.get("output")
            text = _content_text(output) if not isinstance(output, dict) else _arguments(output)
            results.append(ToolResult(_str(payload.get("call_id")), text))
        elif kind == "reasoning" and not out.reasoning:
            summary = payload.get("summary")
            if isinstance(summary, list):
                out.reasoning = "".join(_str(s.get("text")) for s in summary if isinstance(s, dict))
    out.usage = out.usage or recorded  # turn.completed's, when Codex got that far
    return calls, results


__all__ = [
    "Assembled",
    "ToolCall",
    "ToolResult",
    "codex_asked_again",
    "codex_output_batches",
    "read_codex",
    "read_gemini",
    "read_stream_json",
]
