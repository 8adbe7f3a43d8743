// Runs the Gemini clients (@google/genai, and the AI SDK's @ai-sdk/google) against the
// StreamScope proxy and prints a JSON summary per job.
//
//   node gemini.mjs '[{"client": "google-genai-node" | "ai-google", "baseURL": "...",
//                      "key": "...", "prompt": "hi", "schema": {...}, "result": {...}}, ...]'
//
// Each job streams the prompt to demo-chat (the text, its pieces, finish and usage), then
// makes a tool round trip with demo-tools: a get_forecast declaration (the job's JSON
// Schema), the streamed functionCall, the job's result sent back as the functionResponse,
// the final text. Summary: {"text", "chunks", "finish", "usage": {"input", "output"} |
// null, "calls": [{"name", "args"}], "final", "error": null | str}. A client error is
// reported in "error" (exit status 0). tests/clients/support.py copies this file next to
// the node_modules it installs, so the packages come from that cache.

const TOOL = "get_forecast";
const ASK = "The forecast, please";

// -- @google/genai ----------------------------------------------------------------------

async function genai(job, out) {
  const { GoogleGenAI } = await import("@google/genai");
  const ai = new GoogleGenAI({ apiKey: job.key, httpOptions: { baseUrl: job.baseURL } });
  const tagged = (text) => `${text} [${job.nonce}]`;
  for await (const chunk of await ai.models.generateContentStream({
    model: "demo-chat",
    contents: job.prompt,
  })) {
    if (chunk.text) {
      out.text += chunk.text;
      out.chunks += 1;
    }
    out.finish = chunk.candidates?.[0]?.finishReason ?? out.finish;
    const u = chunk.usageMetadata;
    if (u) out.usage = { input: u.promptTokenCount ?? null, output: u.candidatesTokenCount ?? null };
  }
  const config = {
    tools: [{ functionDeclarations: [{ name: TOOL, description: "Forecast for a city.", parametersJsonSchema: job.schema }] }],
  };
  const user = { role: "user", parts: [{ text: tagged(ASK) }] };
  const parts = [];
  for await (const chunk of await ai.models.generateContentStream({ model: "demo-tools", contents: [user], config })) {
    parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []));
  }
  const calls = parts.filter((p) => p.functionCall).map((p) => p.functionCall);
  out.calls = calls.map((c) => ({ name: c.name, args: c.args ?? {} }));
  const replies = calls.map((c) => ({ functionResponse: { name: c.name, id: c.id, response: job.result } }));
  const contents = [user, { role: "model", parts }, { role: "user", parts: replies }];
  for await (const chunk of await ai.models.generateContentStream({ model: "demo-tools", contents, config })) {
    out.final += chunk.text ?? "";
  }
}

// -- @ai-sdk/google ---------------------------------------------------------------------

async function aiGoogle(job, out) {
  const { streamText, tool, jsonSchema, stepCountIs } = await import("ai");
  const { createGoogleGenerativeAI } = await import("@ai-sdk/google");
  const google = createGoogleGenerativeAI({ baseURL: job.baseURL, apiKey: job.key });
  const errors = [];
  const read = async (result, onPart) => {
    for await (const part of result.fullStream) {
      if (part.type === "error") errors.push(part.error);
      else onPart(part);
    }
  };
  await read(
    streamText({ model: google("demo-chat"), prompt: job.prompt, maxRetries: 0, onError: () => {} }),
    (part) => {
      if (part.type === "text-delta") {
        out.text += part.text;
        out.chunks += 1;
      } else if (part.type === "finish") {
        out.finish = part.finishReason;
        out.usage = { input: part.totalUsage.inputTokens ?? null, output: part.totalUsage.outputTokens ?? null };
      }
    },
  );
  const tools = {
    [TOOL]: tool({
      description: "Forecast for a city.",
      inputSchema: jsonSchema(job.schema),
      execute: async () => job.result,
    }),
  };
  let step = 0;
  await read(
    streamText({
      model: google("demo-tools"),
      prompt: `${ASK} [${job.nonce}]`,
      tools,
      stopWhen: stepCountIs(2),
      maxRetries: 0,
      onError: () => {},
    }),
    (part) => {
      if (part.type === "tool-call") out.calls.push({ name: part.toolName, args: part.input });
      else if (part.type === "finish-step") step += 1;
      else if (part.type === "text-delta" && step === 1) out.final += part.text;
    },
  );
  if (errors.length) throw errors[0];
}

// ---------------------------------------------------------------------------------------

const CLIENTS = { "google-genai-node": genai, "ai-google": aiGoogle };

function describe(err) {
  if (err == null) return "unknown error";
  const status = err.statusCode ?? err.status;
  const body = err.responseBody ?? (err.error ? JSON.stringify(err.error) : undefined);
  return [err.name ?? "Error", status, err.message, body].filter((x) => x != null).join(": ");
}

async function run(job) {
  const out = { text: "", chunks: 0, finish: null, usage: null, calls: [], final: "", error: null };
  try {
    await CLIENTS[job.client](job, out);
  } catch (err) {
    out.error = describe(err);
  }
  if (out.finish != null) out.finish = String(out.finish);
  return out;
}

const jobs = JSON.parse(process.argv[2]);
const out = Array.isArray(jobs) ? await Promise.all(jobs.map(run)) : await run(jobs);
process.stdout.write(JSON.stringify(out) + "\n");
