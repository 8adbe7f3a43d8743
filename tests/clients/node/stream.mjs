// Runs Node clients against the StreamScope proxy and prints a JSON summary per job.
//
//   node stream.mjs '[{"client": "ai-openai-chat", "baseURL": "http://127.0.0.1:8787/v1",
//                      "key": "sk-local-...", "model": "demo-chat", "prompt": "hi"}, ...]'
//
// (one job object instead of a list prints one summary). Each summary:
// {"text", "chunks", "finish", "usage": {"input", "output"} | null, "error": null | str}.
// A client error is reported in "error" (exit status 0) so the test can assert what the
// client showed. tests/clients/support.py copies this file next to the node_modules it
// installs (ES modules resolve packages from the importing file's folder), so the
// packages come from that cache, never from the checkout.

const summary = (text = "", chunks = 0, finish = null, usage = null, extra = {}) => ({
  text,
  chunks,
  finish: finish == null ? null : String(finish),
  usage,
  error: null,
  extra,
});

// -- the official SDKs ------------------------------------------------------------------

async function openaiChat(job) {
  const { default: OpenAI } = await import("openai");
  const client = new OpenAI({ baseURL: job.baseURL, apiKey: job.key, maxRetries: 0, timeout: 30000 });
  const stream = await client.chat.completions.create({
    model: job.model,
    messages: [{ role: "user", content: job.prompt }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = "", chunks = 0, finish = null, usage = null;
  for await (const chunk of stream) {
    for (const choice of chunk.choices) {
      if (choice.delta?.content) {
        text += choice.delta.content;
        chunks += 1;
      }
      finish = choice.finish_reason ?? finish;
    }
    if (chunk.usage) usage = { input: chunk.usage.prompt_tokens, output: chunk.usage.completion_tokens };
  }
  return summary(text, chunks, finish, usage);
}

async function openaiResponses(job) {
  const { default: OpenAI } = await import("openai");
  const client = new OpenAI({ baseURL: job.baseURL, apiKey: job.key, maxRetries: 0, timeout: 30000 });
  const stream = client.responses.stream({ model: job.model, input: job.prompt });
  let chunks = 0;
  stream.on("response.output_text.delta", () => { chunks += 1; });
  const final = await stream.finalResponse();
  const usage = final.usage ? { input: final.usage.input_tokens, output: final.usage.output_tokens } : null;
  return summary(final.output_text, chunks, final.status, usage);
}

async function anthropicMessages(job) {
  const { default: Anthropic } = await import("@anthropic-ai/sdk");
  const client = new Anthropic({ baseURL: job.baseURL, apiKey: job.key, maxRetries: 0, timeout: 30000 });
  const stream = client.messages.stream({
    model: job.model,
    max_tokens: 256,
    messages: [{ role: "user", content: job.prompt }],
  });
  let chunks = 0;
  stream.on("text", () => { chunks += 1; });
  const final = await stream.finalMessage();
  const text = final.content.filter((b) => b.type === "text").map((b) => b.text).join("");
  const usage = { input: final.usage.input_tokens, output: final.usage.output_tokens };
  return summary(text, chunks, final.stop_reason, usage);
}

// -- the Vercel AI SDK (what Cherry Studio's provider types run on) ----------------------

async function aiModel(job) {
  switch (job.client) {
    case "ai-openai-chat": {
      const { createOpenAI } = await import("@ai-sdk/openai");
      return createOpenAI({ baseURL: job.baseURL, apiKey: job.key }).chat(job.model);
    }
    case "ai-openai-responses": {
      const { createOpenAI } = await import("@ai-sdk/openai");
      return createOpenAI({ baseURL: job.baseURL, apiKey: job.key }).responses(job.model);
    }
    case "ai-anthropic": {
      const { createAnthropic } = await import("@ai-sdk/anthropic");
      return createAnthropic({ baseURL: job.baseURL, apiKey: job.key })(job.model);
    }
    case "ai-openai-compatible": {
      const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
      const provider = createOpenAICompatible({
        name: "streamscope",
        baseURL: job.baseURL,
        apiKey: job.key,
        includeUsage: true,
      });
      return provider.chatModel(job.model);
    }
    case "ai-azure-chat":
    case "ai-azure-responses": {
      // A custom (non-Azure) baseURL: the provider calls {baseURL}{path} and sends the
      // key as an `api-key` header, as Azure OpenAI clients do.
      const { createAzure } = await import("@ai-sdk/azure");
      const azure = createAzure({ baseURL: job.baseURL, apiKey: job.key });
      return job.client === "ai-azure-chat" ? azure.chat(job.model) : azure.responses(job.model);
    }
    default:
      throw new Error(`unknown client ${job.client}`);
  }
}

async function aiStream(job) {
  const { streamText } = await import("ai");
  const result = streamText({
    model: await aiModel(job),
    prompt: job.prompt,
    maxRetries: 0,
    onError: () => {}, // errors are read from the stream below
  });
  let text = "", chunks = 0, finish = null, usage = null;
  const errors = [];
  for await (const part of result.fullStream) {
    if (part.type === "text-delta") {
      text += part.text;
      chunks += 1;
    } else if (part.type === "finish") {
      finish = part.finishReason;
      usage = { input: part.totalUsage.inputTokens ?? null, output: part.totalUsage.outputTokens ?? null };
    } else if (part.type === "error") {
      errors.push(part.error);
    }
  }
  const out = summary(text, chunks, finish, usage);
  if (errors.length) out.error = describe(errors[0]);
  return out;
}

const CLIENTS = {
  "openai-chat": openaiChat,
  "openai-responses": openaiResponses,
  "anthropic-messages": anthropicMessages,
};

function describe(err) {
  if (err == null) return "unknown error";
  const status = err.statusCode ?? err.status;
  const body = err.responseBody ?? (err.error ? JSON.stringify(err.error) : undefined);
  return [err.name ?? "Error", status, err.message, body].filter((x) => x != null).join(": ");
}

async function run(job) {
  try {
    const fn = CLIENTS[job.client] ?? aiStream;
    return await fn(job);
  } catch (err) {
    const out = summary();
    out.error = describe(err);
    return out;
  }
}

const jobs = JSON.parse(process.argv[2]);
const out = Array.isArray(jobs) ? await Promise.all(jobs.map(run)) : await run(jobs);
process.stdout.write(JSON.stringify(out) + "\n");
