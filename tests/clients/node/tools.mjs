// Runs openai-node's strict tool helpers (zodFunction, zodResponsesFunction) against the
// StreamScope proxy and prints one JSON summary per job.
//
//   node tools.mjs '[{"client": "chat-stream", "baseURL": "http://127.0.0.1:8787/v1",
//                     "key": "sk-local-...", "model": "m", "tool": "updateIssueList"}, ...]'
//
// Clients: chat-stream (chat.completions.stream), chat-parse (chat.completions.parse),
// responses-stream (responses.stream), responses-parse (responses.parse); the tool takes
// no arguments (z.object({})). Each summary: {"calls": [{"name", "arguments", "parsed"}],
// "error": null | str}. A client error is reported in "error" (exit status 0), so the test
// can assert what the client threw. tests/clients/support.py copies this file next to the
// node_modules it installs, so the packages come from that cache.

async function client(job) {
  const { default: OpenAI } = await import("openai");
  return new OpenAI({ baseURL: job.baseURL, apiKey: job.key, maxRetries: 0, timeout: 30000 });
}

const PROMPT = "Update the issue list.";

async function chat(job, streamed) {
  const { zodFunction } = await import("openai/helpers/zod");
  const { z } = await import("zod");
  const tools = [zodFunction({ name: job.tool, parameters: z.object({}) })];
  const api = (await client(job)).chat.completions;
  const request = { model: job.model, messages: [{ role: "user", content: PROMPT }], tools };
  const final = streamed
    ? await api.stream(request).finalChatCompletion()
    : await api.parse(request);
  const calls = final.choices[0].message.tool_calls ?? [];
  return calls.map((c) => ({
    name: c.function.name,
    arguments: c.function.arguments,
    parsed: c.function.parsed_arguments ?? null,
  }));
}

async function responses(job, streamed) {
  const { zodResponsesFunction } = await import("openai/helpers/zod");
  const { z } = await import("zod");
  const tools = [zodResponsesFunction({ name: job.tool, parameters: z.object({}) })];
  const api = (await client(job)).responses;
  const request = { model: job.model, input: PROMPT, tools };
  const final = streamed ? await api.stream(request).finalResponse() : await api.parse(request);
  return final.output
    .filter((item) => item.type === "function_call")
    .map((c) => ({ name: c.name, arguments: c.arguments, parsed: c.parsed_arguments ?? null }));
}

const CLIENTS = {
  "chat-stream": (job) => chat(job, true),
  "chat-parse": (job) => chat(job, false),
  "responses-stream": (job) => responses(job, true),
  "responses-parse": (job) => responses(job, false),
};

async function run(job) {
  try {
    return { calls: await CLIENTS[job.client](job), error: null };
  } catch (err) {
    return { calls: [], error: `${err?.name ?? "Error"}: ${err?.message ?? err}` };
  }
}

const jobs = JSON.parse(process.argv[2]);
const out = Array.isArray(jobs) ? await Promise.all(jobs.map(run)) : await run(jobs);
process.stdout.write(JSON.stringify(out) + "\n");
