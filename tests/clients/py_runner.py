"""Runs one third-party Python client against the proxy and prints a JSON summary.

Run by tests/clients/test_python_clients.py with the *clients'* venv python (it holds
langchain, LiteLLM, pydantic-ai, ...; StreamScope is not installed there, so this file
imports nothing from it):

    python py_runner.py '[{"client": "litellm-openai", "base_url": "...", "key": "...",
                           "model": "demo-chat", "prompt": "..."}, ...]'

(one job object instead of a list prints one summary). For each job it streams one
answer with the client's own streaming API; the last line of stdout is the JSON list of
summaries, each ``{"text", "chunks", "finish", "usage": {"input", "output"} | null,
"error": null | "Type: message", "extra": {...}}``. A client error is reported in
``error`` (the exit code stays 0) so the test can assert what the client showed.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

Summary = dict[str, Any]


def _summary(
    text: str = "",
    chunks: int = 0,
    finish: Any = None,
    usage: tuple[Any, Any] | None = None,
    **extra: Any,
) -> Summary:
    return {
        "text": text,
        "chunks": chunks,
        "finish": None if finish is None else str(finish),
        "usage": None if usage is None else {"input": usage[0], "output": usage[1]},
        "error": None,
        "extra": extra,
    }


# -- LangChain -------------------------------------------------------------------------


def _langchain(chat: Any, prompt: str) -> Summary:
    full = None
    chunks = 0
    for chunk in chat.stream(prompt):
        chunks += bool(chunk.content)
        full = chunk if full is None else full + chunk
    assert full is not None, "the stream yielded no chunk"
    meta = full.response_metadata
    finish = meta.get("finish_reason") or meta.get("stop_reason")
    usage = full.usage_metadata
    pair = (usage["input_tokens"], usage["output_tokens"]) if usage else None
    content = full.content
    if isinstance(content, list):  # content blocks (Anthropic)
        content = "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return _summary(content, chunks, finish, pair)


def langchain_openai(job: dict[str, Any]) -> Summary:
    from langchain_openai import ChatOpenAI

    chat = ChatOpenAI(
        model=job["model"],
        base_url=job["base_url"],
        api_key=job["key"],
        stream_usage=True,
        max_retries=0,
        timeout=30,
    )
    return _langchain(chat, job["prompt"])


def langchain_anthropic(job: dict[str, Any]) -> Summary:
    from langchain_anthropic import ChatAnthropic

    chat = ChatAnthropic(
        model=job["model"],
        base_url=job["base_url"],
        api_key=job["key"],
        max_tokens=256,
        max_retries=0,
        timeout=30,
    )
    return _langchain(chat, job["prompt"])


# -- LiteLLM ---------------------------------------------------------------------------


def _litellm(job: dict[str, Any], provider: str, **kwargs: Any) -> Summary:
    import litellm

    stream = litellm.completion(
        model=f"{provider}/{job['model']}",
        api_base=job["base_url"],
        api_key=job["key"],
        messages=[{"role": "user", "content": job["prompt"]}],
        stream=True,
        num_retries=0,
        timeout=30,
        **kwargs,
    )
    text, chunks, finish, usage = "", 0, None, None
    for chunk in stream:
        for choice in chunk.choices:
            if choice.delta and choice.delta.content:
                text += choice.delta.content
                chunks += 1
            finish = choice.finish_reason or finish
        got = getattr(chunk, "usage", None)
        if got:
            usage = (got.prompt_tokens, got.completion_tokens)
    return _summary(text, chunks, finish, usage)


def litellm_openai(job: dict[str, Any]) -> Summary:
    return _litellm(job, "openai", stream_options={"include_usage": True})


def litellm_anthropic(job: dict[str, Any]) -> Summary:
    return _litellm(job, "anthropic", max_tokens=256, stream_options={"include_usage": True})


# -- pydantic-ai -----------------------------------------------------------------------


async def _pydantic_ai(model: Any, prompt: str) -> Summary:
    from pydantic_ai import Agent

    agent = Agent(model)
    text, chunks = "", 0
    async with agent.run_stream(prompt) as result:
        # debounce_by=None: every delta as it comes, not grouped per 0.1 s
        async for delta in result.stream_text(delta=True, debounce_by=None):
            text += delta
            chunks += 1
        usage = result.usage
        response = result.response
    return _summary(
        text,
        chunks,
        getattr(response, "finish_reason", None),
        (usage.input_tokens, usage.output_tokens),
    )


def pydantic_ai_openai(job: dict[str, Any]) -> Summary:
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(base_url=job["base_url"], api_key=job["key"])
    model = OpenAIChatModel(job["model"], provider=provider)
    return asyncio.run(_pydantic_ai(model, job["prompt"]))


def pydantic_ai_responses(job: dict[str, Any]) -> Summary:
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = OpenAIProvider(base_url=job["base_url"], api_key=job["key"])
    model = OpenAIResponsesModel(job["model"], provider=provider)
    return asyncio.run(_pydantic_ai(model, job["prompt"]))


def pydantic_ai_anthropic(job: dict[str, Any]) -> Summary:
    from pydantic_ai.models.anthropic import AnthropicModel
    from pydantic_ai.providers.anthropic import AnthropicProvider

    provider = AnthropicProvider(base_url=job["base_url"], api_key=job["key"])
    model = AnthropicModel(job["model"], provider=provider)
    return asyncio.run(_pydantic_ai(model, job["prompt"]))


# -- openai-agents ---------------------------------------------------------------------


async def _agents(job: dict[str, Any], api: str) -> Summary:
    import agents
    from openai import AsyncOpenAI
    from openai.types.responses import ResponseCompletedEvent, ResponseTextDeltaEvent

    agents.set_tracing_disabled(True)  # tracing would post to api.openai.com
    client = AsyncOpenAI(base_url=job["base_url"], api_key=job["key"], max_retries=0, timeout=30)
    if api == "chat":
        model: Any = agents.OpenAIChatCompletionsModel(model=job["model"], openai_client=client)
    else:  # the Responses model, as most agents scripts set it up
        agents.set_default_openai_client(client, use_for_tracing=False)
        agents.set_default_openai_api("responses")
        model = job["model"]
    # include_usage: the Chat Completions model asks for the usage chunk only when told
    settings = agents.ModelSettings(include_usage=True)
    agent = agents.Agent(
        name="demo", instructions="Answer briefly.", model=model, model_settings=settings
    )
    result = agents.Runner.run_streamed(agent, input=job["prompt"])
    text, chunks, finish = "", 0, None
    async for event in result.stream_events():
        if event.type != "raw_response_event":
            continue
        if isinstance(event.data, ResponseTextDeltaEvent):
            text += event.data.delta
            chunks += 1
        elif isinstance(event.data, ResponseCompletedEvent):
            # the Chat Completions model's synthesized response has no status
            finish = event.data.response.status or event.data.type
    usage = result.context_wrapper.usage
    return _summary(
        text,
        chunks,
        finish,
        (usage.input_tokens, usage.output_tokens),
        final_output=result.final_output,
    )


def agents_chat(job: dict[str, Any]) -> Summary:
    return asyncio.run(_agents(job, "chat"))


def agents_responses(job: dict[str, Any]) -> Summary:
    return asyncio.run(_agents(job, "responses"))


# -- instructor ------------------------------------------------------------------------


def instructor_openai(job: dict[str, Any]) -> Summary:
    from typing import Literal

    import instructor
    from openai import OpenAI
    from pydantic import BaseModel

    class Weather(BaseModel):
        """The weather the user asked about."""

        location: str
        unit: Literal["celsius", "fahrenheit"]

    client = instructor.from_openai(
        OpenAI(base_url=job["base_url"], api_key=job["key"], max_retries=0, timeout=30),
        mode=instructor.Mode.TOOLS,
    )
    partials = 0
    last: Any = None
    for partial in client.chat.completions.create_partial(
        model=job["model"],
        response_model=Weather,
        messages=[{"role": "user", "content": job["prompt"]}],
        max_retries=0,
    ):
        partials += 1
        last = partial
    assert last is not None, "no partial object was streamed"
    final = Weather.model_validate(last.model_dump())  # complete and valid
    return _summary(
        final.model_dump_json(), partials, "tool_calls", None, object=final.model_dump()
    )


# -- the llm CLI -----------------------------------------------------------------------


def llm_cli(job: dict[str, Any]) -> Summary:
    """``llm -m streamscope-demo PROMPT`` with the model defined in
    extra-openai-models.yaml of a fresh LLM_USER_PATH (so a developer's own llm
    configuration is neither read nor touched)."""
    with tempfile.TemporaryDirectory(prefix="llm-user-") as home:
        user = Path(home)
        (user / "extra-openai-models.yaml").write_text(
            "- model_id: streamscope-demo\n"
            f"  model_name: {job['model']}\n"
            f'  api_base: "{job["base_url"]}"\n'
            "  api_key_name: streamscope\n"
        )
        (user / "keys.json").write_text(json.dumps({"streamscope": job["key"]}))
        env = {**os.environ, "LLM_USER_PATH": str(user)}
        llm = str(Path(sys.executable).with_name("llm"))
        run = subprocess.run(
            [llm, "-m", "streamscope-demo", "--usage", job["prompt"]],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        if run.returncode != 0:
            out = _summary(run.stdout)
            out["error"] = f"llm exited {run.returncode}: {run.stderr.strip()}"
            return out
        logged = subprocess.run(
            [llm, "logs", "list", "--json", "-n", "1"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
    entry = json.loads(logged.stdout)[0] if logged.returncode == 0 else {}
    usage = (entry.get("input_tokens"), entry.get("output_tokens")) if entry else None
    return _summary(
        run.stdout.rstrip("\n"),
        -1,  # the CLI streams to its stdout; chunk boundaries are not visible from here
        (entry.get("response_json") or {}).get("finish_reason") if entry else None,
        usage,
        stderr=run.stderr.strip(),
        logged=entry,
    )


CLIENTS = {
    "langchain-openai": langchain_openai,
    "langchain-anthropic": langchain_anthropic,
    "litellm-openai": litellm_openai,
    "litellm-anthropic": litellm_anthropic,
    "pydantic-ai-openai": pydantic_ai_openai,
    "pydantic-ai-responses": pydantic_ai_responses,
    "pydantic-ai-anthropic": pydantic_ai_anthropic,
    "agents-chat": agents_chat,
    "agents-responses": agents_responses,
    "instructor": instructor_openai,
    "llm-cli": llm_cli,
}


def run(job: dict[str, Any]) -> Summary:
    try:
        return CLIENTS[job["client"]](job)
    except Exception as exc:  # what the client raised is the result
        out = _summary()
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["extra"] = {"traceback": traceback.format_exc(limit=3)}
        return out


def main() -> None:
    jobs = json.loads(sys.argv[1])
    out = [run(job) for job in jobs] if isinstance(jobs, list) else run(jobs)
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
