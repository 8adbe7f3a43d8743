// StreamScope's real-client runner: streams from a loopback server through real Node
// clients and prints what each one assembled.
//
//   node run_clients.mjs < jobs.json
//
// stdin: {"timeout_ms": 30000, "jobs": [{"id", "client", "baseURL"}, ...]}
// stdout: one JSON line per job, as each finishes:
//   {"id", "text", "reasoning", "tool_calls": [[name, args]], "finish", "usage": [in, out] | null,
//    "error": null | str, "error_types": [class, its bases…] (when an error), "duration_ms"}
//
// A client's error is reported in "error" (exit status 0): what the client showed is the
// result. StreamScope copies this file next to the node_modules that
// `streamscope clients install` made (ES modules resolve packages from the importing
// file's folder), so the packages come from that folder and nothing is fetched here.

const KEY = "sk-streamscope-replay";
const MODEL = "replay";
const PROMPT = "hi";

const result = () => ({
  text: "",
  reasoning: "",
  tool_calls: [],
  finish: null,
  usage: null,
  error: null,
});

function describe(err) {
  if (err == null) return "unknown error";
  if (typeof err !== "object") return String(err);
  const name = err.name ?? err.constructor?.name ?? "Error";
  let message = err.message ?? String(err);
  if (err.cause && err.cause.message && !message.includes(err.cause.message)) {
    message += ` (${err.cause.message})`;
  }
  return `${name}: ${message}`.slice(0, 2000);
}

// The error's classes, its own first, up its prototype chain: what an app can catch
// (openai-node's NotFoundError names itself "Error"; its class says APIError).
function classes(err) {
  const out = [];
  for (let p = err != null && typeof err === "object" ? Object.getPrototypeOf(err) : null; p; p = Object.getPrototypeOf(p)) {
    const name = p.constructor?.name;
    if (name && name !== "Object" && !out.includes(name)) out.push(name);
  }
  return out;
}

const args = (text) => {
  if (typeof text !== "string") return JSON.stringify(text ?? {});
  return text;
};

// -- the official SDKs ------------------------------------------------------------------

function options(job, signal) {
  return { baseURL: job.baseURL, apiKey: KEY, maxRetries: 0, timeout: job.timeout_ms, fetchOptions: { signal } };
}

async function openaiChat(job, out, signal) {
  const { default: OpenAI } = await import("openai");
  const client = new OpenAI(options(job, signal));
  const stream = client.chat.completions.stream({
    model: MODEL,
    messages: [{ role: "user", content: PROMPT }],
    stream_options: { include_usage: true },
  });
  const final = await stream.finalChatCompletion();
  const choice = final.choices[0];
  const msg = choice?.message ?? {};
  out.text = msg.content ?? "";
  out.reasoning = msg.reasoning_content ?? msg.reasoning ?? "";
  out.tool_calls = (msg.tool_calls ?? []).map((c) => [c.function?.name ?? "", args(c.function?.arguments)]);
  out.finish = choice?.finish_reason ?? null;
  if (final.usage) out.usage = [final.usage.prompt_tokens ?? null, final.usage.completion_tokens ?? null];
}

async function openaiResponses(job, out, signal) {
  const { default: OpenAI } = await import("openai");
  const client = new OpenAI(options(job, signal));
  const stream = client.responses.stream({ model: MODEL, input: PROMPT });
  const final = await stream.finalResponse();
  out.text = final.output_text ?? "";
  for (const item of final.output ?? []) {
    if (item.type === "reasoning") {
      out.reasoning += (item.summary ?? []).map((s) => s.text).join("");
      out.reasoning += (item.content ?? []).map((s) => s.text).join("");
    } else if (item.type === "function_call") {
      out.tool_calls.push([item.name ?? "", args(item.arguments)]);
    }
  }
  out.finish = final.status ?? null;
  if (final.usage) out.usage = [final.usage.input_tokens ?? null, final.usage.output_tokens ?? null];
}

async function anthropicMessages(job, out, signal) {
  const { default: Anthropic } = await import("@anthropic-ai/sdk");
  const client = new Anthropic(options(job, signal));
  const stream = client.messages.stream({
    model: MODEL,
    max_tokens: 1024,
    messages: [{ role: "user", content: PROMPT }],
  });
  const final = await stream.finalMessage();
  for (const block of final.content ?? []) {
    if (block.type === "text") out.text += block.text;
    else if (block.type === "thinking") out.reasoning += block.thinking;
    else if (block.type === "tool_use") out.tool_calls.push([block.name, JSON.stringify(block.input ?? {})]);
  }
  out.finish = final.stop_reason ?? null;
  if (final.usage) out.usage = [final.usage.input_tokens ?? null, final.usage.output_tokens ?? null];
}

// What an app does with @google/genai: stream, and read each chunk's first candidate's
// parts as they come (a thought part is reasoning), the last finish and the last usage
// (each chunk carries the total so far).
async function googleGenai(job, out, signal) {
  const { GoogleGenAI } = await import("@google/genai");
  const ai = new GoogleGenAI({
    apiKey: KEY,
    httpOptions: { baseUrl: job.baseURL, timeout: job.timeout_ms, retryOptions: { attempts: 1 } },
  });
  const stream = await ai.models.generateContentStream({
    model: MODEL,
    contents: PROMPT,
    config: { abortSignal: signal },
  });
  for await (const chunk of stream) {
    const candidate = chunk.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) {
      if (part.text != null) {
        if (part.thought) out.reasoning += part.text;
        else out.text += part.text;
      }
      // the args as they came (a string stays a string), as the app gets them
      if (part.functionCall != null) out.tool_calls.push([part.functionCall.name ?? "", JSON.stringify(part.functionCall.args ?? {})]);
    }
    if (candidate?.finishReason != null) out.finish = candidate.finishReason;
    if (chunk.promptFeedback?.blockReason != null) out.finish = chunk.promptFeedback.blockReason;
    const u = chunk.usageMetadata;
    if (u != null) out.usage = [u.promptTokenCount ?? null, u.candidatesTokenCount ?? null];
  }
}

// -- the Vercel AI SDK (what Cherry Studio's provider types run on) ----------------------

// Any tool the stream calls is one the app offered (Cherry Studio passes its MCP tools):
// a tool set that has every name, with no execute, so the call is reported, not run.
async function anyTools() {
  const { dynamicTool, jsonSchema } = await import("ai");
  const made = {};
  const make = (name) =>
    (made[name] ??= dynamicTool({ description: name, inputSchema: jsonSchema({ type: "object" }) }));
  return new Proxy(
    {},
    {
      get: (_, name) => (typeof name === "string" ? make(name) : undefined),
      has: () => true,
      ownKeys: () => [],
      getOwnPropertyDescriptor: () => undefined,
    },
  );
}

// Cherry Studio's provider types, through its own provider layer: ai-core's
// streamText(providerId, settings, params), which makes the AI SDK provider's model itself
// (@ai-sdk/openai-compatible, @ai-sdk/openai .chat() and .responses(), @ai-sdk/anthropic,
// @ai-sdk/google, and the built-in providers' own packages), as Cherry Studio calls it.
const CHERRY_PROVIDERS = {
  "ai-openai-compatible": "openai-compatible",
  "ai-openai-chat": "openai-chat",
  "ai-openai-responses": "openai-response",
  "ai-anthropic": "anthropic",
  "ai-google": "gemini",
  "cherry-deepseek": "deepseek",
  "cherry-xai": "xai",
  "cherry-openrouter": "openrouter",
  "cherry-azure": "azure",
};

// A provider Cherry Studio adds as "OpenAI" is OpenAI-compatible, named, with usage asked.
const CHERRY_SETTINGS = { "ai-openai-compatible": { name: "streamscope", includeUsage: true } };

async function cherryStream(job, out, signal) {
  const { streamText } = await import("@cherrystudio/ai-core");
  const settings = { baseURL: job.baseURL, apiKey: KEY, ...(CHERRY_SETTINGS[job.client] ?? {}) };
  const result = await streamText(CHERRY_PROVIDERS[job.client], settings, {
    model: MODEL,
    prompt: PROMPT,
    tools: await anyTools(),
    maxRetries: 0,
    abortSignal: signal,
    onError: () => {}, // errors are read from the stream
  });
  await readAiStream(result, out);
}

// What an AI SDK app sees of a streamText result: the text, reasoning and tool calls as
// they come, the finish with the usage, and the first error part.
async function readAiStream(result, out) {
  const errors = [];
  for await (const part of result.fullStream) {
    if (part.type === "text-delta") out.text += part.text;
    else if (part.type === "reasoning-delta") out.reasoning += part.text;
    // A call the provider ran itself (Responses' web_search_call: providerExecuted) is no
    // call the app has to answer: it is left out, as the SDKs' function calls leave it.
    else if (part.type === "tool-call" && !part.providerExecuted) out.tool_calls.push([part.toolName, args(part.input)]);
    else if (part.type === "finish") {
      out.finish = part.finishReason ?? null;
      const u = part.totalUsage ?? {};
      if (u.inputTokens != null || u.outputTokens != null) out.usage = [u.inputTokens ?? null, u.outputTokens ?? null];
    } else if (part.type === "error") errors.push(part.error);
    else if (part.type === "tool-error") errors.push(part.error);
  }
  if (errors.length) {
    out.error = describe(errors[0]);
    out.error_types = classes(errors[0]);
  }
}

const CLIENTS = {
  "openai-node-chat": openaiChat,
  "openai-node-responses": openaiResponses,
  "anthropic-node": anthropicMessages,
  "ai-openai-compatible": cherryStream,
  "ai-openai-chat": cherryStream,
  "ai-openai-responses": cherryStream,
  "ai-anthropic": cherryStream,
  "ai-google": cherryStream,
  "cherry-deepseek": cherryStream,
  "cherry-xai": cherryStream,
  "cherry-openrouter": cherryStream,
  "cherry-azure": cherryStream,
  "google-genai-node": googleGenai,
};

async function run(job) {
  const out = { id: job.id, ...result() };
  const start = performance.now();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no result after ${job.timeout_ms} ms`)), job.timeout_ms);
  try {
    const fn = CLIENTS[job.client];
    if (fn == null) throw new Error(`unknown client ${job.client}`);
    await fn(job, out, controller.signal);
  } catch (err) {
    out.error = describe(err);
    out.error_types = classes(err);
  } finally {
    clearTimeout(timer);
  }
  out.duration_ms = performance.now() - start;
  return out;
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

const input = await readStdin();
const timeout_ms = input.timeout_ms ?? 30000;
const jobs = input.jobs.map((j) => ({ timeout_ms, ...j }));
const limit = Math.max(1, input.concurrency ?? 8);
let next = 0;
async function worker() {
  while (next < jobs.length) {
    const job = jobs[next++];
    const out = await run(job);
    process.stdout.write(JSON.stringify(out) + "\n");
  }
}
await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
