// Cherry Studio's provider types, driven as Cherry Studio drives them: @cherrystudio/ai-core's
// streamText(providerId, {apiKey, baseURL, ...settings}, params), with the provider id and
// the base URL Cherry Studio hands ai-core for that type ("openai-response" by default:
// @ai-sdk/openai's .responses() model with `store` left at its default, true). Each job is
// one conversation of several turns (one model per turn), each turn a tool loop (tools
// that execute, stopWhen: stepCountIs(steps)); a turn's messages go into the next, so
// later requests send earlier answers back (Responses: as item_reference).
//
//   node cherry.mjs '[{"provider": "deepseek", "settings": {}, "baseURL":
//                      "http://127.0.0.1:8787/v1", "key": "sk-local-...",
//                      "models": ["ant/demo-tools", "ant/demo-reasoning"], "steps": 4}]'
//
// Prints one JSON line: per job {"turns": [{"text", "reasoning", "steps", "finish"}],
// "calls": [tool inputs], "bodies": [each request body sent], "requests": [{"url", "keys":
// {header: value} of the headers that carry a key, "ua": its User-Agent}], "error": null | str}. A client
// error is reported in "error" (exit status 0). tests/clients/test_cherry_responses.py
// and test_cherry_types.py install the pinned packages and copy this file beside them.

import { streamText } from "@cherrystudio/ai-core";
import { stepCountIs, tool } from "ai";
import { z } from "zod";

// Request bodies as they leave, by base URL (the jobs run one after the other).
const sent = [];
const KEY_HEADERS = ["authorization", "x-api-key", "api-key", "x-goog-api-key"];
const realFetch = globalThis.fetch;
globalThis.fetch = async (url, init) => {
  if (init?.body) {
    const headers = new Headers(init.headers ?? {});
    const keys = Object.fromEntries(KEY_HEADERS.filter((h) => headers.has(h)).map((h) => [h, headers.get(h)]));
    sent.push({ url: String(url), keys, ua: headers.get("user-agent"), body: JSON.parse(init.body) });
  }
  return realFetch(url, init);
};

async function turn(job, model, messages, calls) {
  const tools = {
    // The demo's own weather tool's shape, so that an upstream whose endpoint carries no
    // tools (LM Studio's /api/v1/chat: the demo then calls its built-in one) runs it too.
    get_weather: tool({
      description: "The weather in a city.",
      inputSchema: z.object({
        location: z.string(),
        unit: z.enum(["celsius", "fahrenheit"]).optional(),
      }),
      execute: async (input) => {
        calls.push(input);
        return { location: input.location, forecast: "sunny, 21 C" };
      },
    }),
  };
  const result = await streamText(
    job.provider ?? "openai-response",
    { apiKey: job.key, baseURL: job.baseURL, ...(job.settings ?? {}) },
    { model, messages, tools, stopWhen: stepCountIs(job.steps ?? 4) },
  );
  let text = "";
  let reasoning = "";
  for await (const part of result.fullStream) {
    if (part.type === "text-delta") text += part.text;
    if (part.type === "reasoning-delta") reasoning += part.text;
    if (part.type === "error") throw part.error;
  }
  const steps = await result.steps;
  const response = await result.response;
  return {
    summary: { text, reasoning, steps: steps.length, finish: await result.finishReason },
    messages: response.messages,
  };
}

function requests(from) {
  const mine = sent.slice(from);
  return { bodies: mine.map((s) => s.body), requests: mine.map((s) => ({ url: s.url, keys: s.keys, ua: s.ua })) };
}

async function run(job) {
  const calls = [];
  const turns = [];
  const from = sent.length;
  try {
    let messages = [{ role: "user", content: "What is the weather in Lyon?" }];
    for (const model of job.models) {
      const done = await turn(job, model, messages, calls);
      turns.push(done.summary);
      messages = [...messages, ...done.messages, { role: "user", content: "And tomorrow?" }];
    }
    return { turns, calls, ...requests(from), error: null };
  } catch (err) {
    const body = err?.responseBody ? ` ${err.responseBody}` : "";
    return {
      turns,
      calls,
      ...requests(from),
      error: `${err?.name ?? "Error"}: ${err?.message ?? err}${body}`,
    };
  }
}

const jobs = JSON.parse(process.argv[2]);
const out = [];
for (const job of jobs) out.push(await run(job));
process.stdout.write(JSON.stringify(out) + "\n");
