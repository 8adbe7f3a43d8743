"""What the agent CLIs do with what the provider did (``lint/rules_provider.py``'s claims
beyond what test_compare_profiles_proven.py's effects show), proven by running them
(app/streamscope/realclients/agent_jobs.py) on a loopback replay that counts the requests
each makes. A replay answers every request with the same stream, so a CLI that asks the
model to go on gets the same cut again, and shows what it joins:

- an answer cut by the length limit: Claude Code asks to resume (max_tokens raised) 3
  times, joins the pieces and fails, naming its own 128000-token maximum; Qwen Code asks
  again with a higher limit and to resume, and joins every answer into one, without error;
- a tool call cut inside its arguments: Qwen Code asks again once, then runs the call
  with the cut arguments closed into JSON; Claude Code drops the call;
- Anthropic's ``refusal`` stop: Claude Code asks once more, then fails.
"""

from __future__ import annotations

import pytest

from streamscope.lint import RULES
from streamscope.realclients.compare import intended_answer
from tests.lint.cases import CASES
from tests.realclients.test_agent_jobs_claims import replay

pytestmark = pytest.mark.timeout(600)


def case(case_id: str) -> bytes:
    return next(c for c in CASES if c.id == case_id).build()


def claim(rule: str, agent: str) -> str:
    return RULES[rule].breaks[agent].how


def test_claude_code_asks_to_resume_an_answer_cut_by_max_tokens_then_fails() -> None:
    for case_id in ("provider.length@anthropic", "provider.length-in-tool-call"):
        raw = case(case_id)
        result, requests = replay("claude-code", raw)
        text = intended_answer(raw, "anthropic").text
        assert requests == 4 and result["text"] == text * 4, (case_id, requests)
        assert result["tool_calls"] == []  # the cut call, never whole, is dropped
        said = "API Error: Claude's response exceeded the 128000 output token maximum"
        assert result["error"].startswith(said), result["error"]
    assert "128000" in claim("provider.length", "claude-code")
    assert "resume" in claim("provider.length-in-tool-call", "claude-code")


def test_qwen_code_joins_the_answers_it_asks_for_after_a_cut() -> None:
    raw = case("provider.length")
    result, requests = replay("qwen-code", raw)
    text = intended_answer(raw, "openai-chat").text
    assert result["error"] is None and result["text"] == text * 4
    assert requests >= 4  # the cut answer, a higher limit, then to resume (and its own asides)
    assert "joins every answer into one" in claim("provider.length", "qwen-code")


def test_qwen_code_runs_a_call_cut_by_length_with_its_json_closed() -> None:
    raw = case("provider.length-in-tool-call@openai-chat")
    result, requests = replay("qwen-code", raw)
    (cut,) = intended_answer(raw, "openai-chat").tool_calls
    assert requests == 2  # asked again once, with a higher output limit
    assert cut[1].endswith('"units":"')
    assert result["tool_calls"] == [[cut[0], cut[1] + '"}']]
    assert '`"units":""`' in claim("provider.length-in-tool-call", "qwen-code")


def test_claude_code_asks_once_more_after_a_refusal_then_fails() -> None:
    raw = case("provider.refusal@anthropic")
    result, requests = replay("claude-code", raw)
    text = intended_answer(raw, "anthropic").text
    assert requests == 2 and result["text"] == text * 2
    assert "safeguards flagged this message" in result["error"]
    assert "safety classifier" in claim("provider.refusal", "claude-code")
