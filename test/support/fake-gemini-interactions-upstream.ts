// A real HTTP server speaking Google's Interactions API (POST
// /v1beta/interactions), for tests, its shapes those of @google/genai 3.3.0's
// Interactions types (written from them, not recorded). It records every
// request it receives. Before anything else it refuses, with Google's status
// and error body, what the real API refuses (gemini-interactions-request-rules.ts):
// no key (403), unknown fields and enum values, a function result without its
// call, a Gemini 3 call of the current turn without a signed thought (400).
// Then the body's model picks a failure:
//   "fail-<status>"   answers that HTTP status with Google's error body
//   "cut-after-first" streams the first step's first delta, then destroys the connection
//   "end-early"       streams the first step's first delta, then ends cleanly without interaction.completed
//   "hang"            streams the first step's first delta, then waits until the client goes away
//   "stream-error"    streams the first step's first delta, then an `error` event
// Otherwise the request's content picks the answer:
//   - generation_config.thinking_summaries "auto": a thought step first, its
//     summary FAKE_THOUGHT and its signature (thought_summary, then
//     thought_signature deltas);
//   - function tools, and no function_result as the last step: a function_call
//     step to the first function with arguments {"city":"Paris"} (its JSON in two
//     arguments_delta fragments), id FAKE_CALL_IDS[0], status requires_action;
//     offered two or more functions, two calls (FAKE_PARALLEL_ARGS: the first
//     function, then the second), each its own step;
//   - a response_format with mime_type application/json: the text {"answer":"Hello"};
//   - else "Hello from <model>", in several text deltas;
//   - a response_format image (an image model's aspect ratio): the model output
//     ends with an image (FAKE_IMAGE);
//   - a model named lyria-*: the model output ends with an MP3 in two audio
//     deltas (FAKE_AUDIO_PARTS), as a music model streams it.
// Interactions asked `store: true` are kept, by API key, under ids of their
// own (FAKE_STORED_ID_PREFIX and a number; an unstored one is
// FAKE_INTERACTION_ID): `previous_interaction_id` continues one (its timeline,
// input and output steps, comes before the request's input, for the checks
// and the answer), and names an unknown one a 404 NOT_FOUND, as Google answers
// a missing resource; DELETE /v1beta/interactions/{id} forgets one (200 {}),
// 404 when there is none. `stored` shows what is kept; `failNext(status)`
// answers the next request (create or DELETE) with that failure.
// A create with `background: true` (as the router sends a video request) is
// answered at once, the interaction `in_progress` without steps, and kept as a
// job: GET /v1beta/interactions/{id} answers it in progress FAKE_VIDEO_POLLS
// times, then completed with its answer: for a response_format video a
// model_output step with FAKE_VIDEO inline (base64) and the usage of
// FAKE_VIDEO_USAGE (output tokens by modality, video among them); a model
// named "veo-fail" ends failed (Google's `errors`); "veo-hang" stays in
// progress. POST .../{id}/cancel ends a job `cancelled` (`jobs` shows them).
// The stream is Google's SSE: `event: <event_type>` and `data: <json>` frames,
// numbered by `event_id`: interaction.created, interaction.status_update, per
// step step.start / step.delta / step.stop, interaction.completed (its status
// and usage), then `data: [DONE]`. Without `stream: true` the answer is the
// whole Interaction. Usage: total_input_tokens 10, total_output_tokens 5,
// total_cached_tokens 2, total_thought_tokens 3 when thoughts were asked, the
// input by modality. A model named "*conversation*" counts total_input_tokens
// from system_instruction and input, signs per request (by its number of turns,
// turnsOf: what the other fakes count as messages) and refuses a thought
// signature it did not give (conversation-model.ts).
import type http from "node:http";
import { isConversationModel, isForeignSignature, promptTokensOf, signatureOfTurn } from "./conversation-model.ts";
import { refusalOf } from "./gemini-interactions-request-rules.ts";
import { sendGoogleError } from "./google-error.ts";
import { startRecordingServer, type FakeUpstream } from "./recording-server.ts";

export const FAKE_THOUGHT = "Let me think.";
/** base64 of "fake-signature". */
export const FAKE_SIGNATURE = "ZmFrZS1zaWduYXR1cmU=";
/** base64 of the PNG signature: the image an image-format answer carries. */
export const FAKE_IMAGE = "iVBORw0KGgo=";
/** Two pieces of one MP3 file (an ID3 tag, then a frame header), base64. */
export const FAKE_AUDIO_PARTS = ["SUQzBAAAAAAAAA==", "//uQZAAAAAAA"];
/** The arguments of the calls of an answer offered two or more functions: to the first, then the second. */
export const FAKE_PARALLEL_ARGS = [{ city: "Paris" }, { city: "London" }] as const;
/** The ids the fake gives its function calls, in order. */
export const FAKE_CALL_IDS = ["fc_fake1", "fc_fake2"] as const;
/** The interaction id of every answer (the real API's are `v1_...`). */
export const FAKE_INTERACTION_ID = "v1_fake-interaction";
/** The ids of stored interactions: this and a number from 1. */
export const FAKE_STORED_ID_PREFIX = "v1_fake-stored-";
export const FAKE_USAGE = { total_input_tokens: 10, total_output_tokens: 5, total_cached_tokens: 2 } as const;
/** The bytes of the video a background video job makes (an MP4's ftyp box head, and bytes no UTF-8 text has). */
export const FAKE_VIDEO = Buffer.from([0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d, 0xff, 0xfe, 0x80, 0x00]);
/** The GETs a background job answers in progress before it is done. */
export const FAKE_VIDEO_POLLS = 2;
/** A finished video job's usage: 1000 video tokens and 5 text tokens of output. */
export const FAKE_VIDEO_USAGE = {
  total_input_tokens: 10,
  total_output_tokens: 1005,
  total_cached_tokens: 0,
  total_thought_tokens: 0,
  total_tool_use_tokens: 0,
  total_tokens: 1015,
  input_tokens_by_modality: [{ modality: "text", tokens: 10 }],
  output_tokens_by_modality: [
    { modality: "video", tokens: 1000 },
    { modality: "text", tokens: 5 },
  ],
} as const;

/** A background interaction the fake is working on. */
export interface FakeJob {
  id: string;
  body: Json;
  status: string;
  /** The GETs answered so far. */
  polls: number;
}


type Json = Record<string, any>;
/** A step as the answer's `steps` show it, with the deltas a stream sends it in. */
interface AnswerStep {
  /** The step as step.start opens it. */
  start: Json;
  deltas: Json[];
  /** The whole step (a JSON answer's). */
  whole: Json;
}

export interface FakeGeminiInteractionsUpstream extends FakeUpstream {
  /** The kept interactions' timelines (input then output steps, from the first of their conversation), by API key, then id. */
  stored: Map<string, Map<string, Json[]>>;
  /** The next request (a create or a DELETE) is answered this status with Google's error body (an upstream down for one call). */
  failNext(status: number): void;
  /** The background interactions, by id. */
  jobs: Map<string, FakeJob>;
}

export async function startFakeGeminiInteractionsUpstream(): Promise<FakeGeminiInteractionsUpstream> {
  const stored = new Map<string, Map<string, Json[]>>();
  let storedCount = 0;
  let failing: number | undefined;
  const keptBy = (key: unknown) => {
    const name = String(key ?? "");
    if (!stored.has(name)) stored.set(name, new Map());
    return stored.get(name)!;
  };
  const jobs = new Map<string, FakeJob>();
  const server = await startRecordingServer("/v1beta", ({ method, path, headers, body }, res, onAbort) => {
    const pathname = new URL(path, "http://fake").pathname;
    const one = /^\/v1beta\/interactions\/([^/]+)$/.exec(pathname);
    if (failing !== undefined) {
      const status = failing;
      failing = undefined;
      return sendGoogleError(res, status, `fake failure ${status}`);
    }
    const cancel = /^\/v1beta\/interactions\/([^/]+)\/cancel$/.exec(pathname);
    const job = jobs.get(decodeURIComponent((one ?? cancel)?.[1] ?? ""));
    if (method === "POST" && cancel) {
      if (!job) return sendGoogleError(res, 404, "Requested entity was not found.");
      if (job.status === "in_progress") job.status = "cancelled";
      return sendJson(res, jobResource(job));
    }
    if (method === "GET" && one) {
      if (!job) return sendGoogleError(res, 404, "Requested entity was not found.");
      job.polls++;
      if (job.status === "in_progress" && job.polls > FAKE_VIDEO_POLLS && job.body.model !== "veo-hang") job.status = job.body.model === "veo-fail" ? "failed" : "completed";
      return sendJson(res, jobResource(job));
    }
    if (method === "DELETE" && one) {
      const forgotten = keptBy(headers["x-goog-api-key"]).delete(decodeURIComponent(one[1]));
      if (!jobs.delete(decodeURIComponent(one[1])) && !forgotten) return sendGoogleError(res, 404, "Requested entity was not found.");
      res.writeHead(200, { "content-type": "application/json; charset=UTF-8" });
      return res.end("{}");
    }
    if (method !== "POST" || pathname !== "/v1beta/interactions") return sendGoogleError(res, 404, `unknown path ${method} ${path}`);
    const kept = keptBy(headers["x-goog-api-key"]);
    const previous = typeof body.previous_interaction_id === "string" ? kept.get(body.previous_interaction_id) : [];
    if (!previous) return sendGoogleError(res, 404, "Requested entity was not found.");
    // The request as the model sees it: the kept timeline, then this input.
    const whole = previous.length > 0 ? { ...body, input: [...previous, ...stepsOf(body.input)] } : body;
    const refusal = refusalOf(headers, whole) ?? foreignSignatureRefusal(whole);
    if (refusal) {
      res.writeHead(refusal.status, { "content-type": "application/json; charset=UTF-8" });
      res.end(JSON.stringify(refusal.body));
      return;
    }
    const id = body.store === true ? `${FAKE_STORED_ID_PREFIX}${++storedCount}` : FAKE_INTERACTION_ID;
    if (body.background === true) {
      const started: FakeJob = { id, body, status: "in_progress", polls: 0 };
      jobs.set(id, started);
      return sendJson(res, jobResource(started));
    }
    const output = answer(whole, id, res, onAbort);
    if (output && body.store === true) kept.set(id, [...stepsOf(whole.input), ...output]);
  });
  return Object.assign(server, { stored, jobs, failNext: (status: number) => void (failing = status) });
}

/**
 * A request as the model saw it: the timeline of the interaction it continues
 * (`previous_interaction_id`, as this fake keeps it), then its own input; the
 * request itself when it continues none.
 */
export function asSeen(upstream: FakeGeminiInteractionsUpstream, body: Json): Json {
  const id = body.previous_interaction_id;
  if (typeof id !== "string") return body;
  for (const kept of upstream.stored.values()) {
    const timeline = kept.get(id);
    if (timeline) return { ...body, input: [...timeline, ...stepsOf(body.input)] };
  }
  return body;
}

/** An input as steps (a string is one user_input step). */
function stepsOf(input: unknown): Json[] {
  return Array.isArray(input) ? (input as Json[]) : [{ type: "user_input", content: [{ type: "text", text: String(input) }] }];
}

/** Answers the request; the output steps of a complete answer, else undefined. */
function answer(body: Json, interactionId: string, res: http.ServerResponse, onAbort: () => void): Json[] | undefined {
  const model = String(body.model);
  const failure = /^fail-(\d{3})$/.exec(model);
  if (failure) {
    sendGoogleError(res, Number(failure[1]), `fake failure ${failure[1]}`);
    return undefined;
  }
  const thoughts = body.generation_config?.thinking_summaries === "auto";
  const steps = answerSteps(model, body, thoughts);
  const status = steps.some((step) => step.start.type === "function_call") ? "requires_action" : "completed";
  const inputTokens = isConversationModel(model) ? promptTokensOf({ system_instruction: body.system_instruction, input: body.input }) : FAKE_USAGE.total_input_tokens;
  const thoughtTokens = thoughts ? 3 : 0;
  const usage = {
    total_input_tokens: inputTokens,
    total_output_tokens: FAKE_USAGE.total_output_tokens,
    total_cached_tokens: FAKE_USAGE.total_cached_tokens,
    total_thought_tokens: thoughtTokens,
    total_tool_use_tokens: 0,
    total_tokens: inputTokens + FAKE_USAGE.total_output_tokens + thoughtTokens,
    input_tokens_by_modality: [{ modality: "text", tokens: inputTokens }],
  };
  const created = new Date(0).toISOString();
  const interaction = { id: interactionId, object: "interaction", model, created, updated: created };

  if (body.stream !== true) {
    res.writeHead(200, { "content-type": "application/json; charset=UTF-8" });
    res.end(JSON.stringify({ ...interaction, status, steps: steps.map((step) => step.whole), usage }));
    return steps.map((step) => step.whole);
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  let eventId = 0;
  const send = (eventType: string, fields: Json) => res.write(`event: ${eventType}\ndata: ${JSON.stringify({ event_type: eventType, ...fields, event_id: String(eventId++) })}\n\n`);
  send("interaction.created", { interaction: { ...interaction, status: "in_progress" } });
  send("interaction.status_update", { interaction_id: interactionId, status: "in_progress" });
  if (["cut-after-first", "end-early", "hang", "stream-error"].includes(model)) {
    send("step.start", { index: 0, step: steps[0].start });
    send("step.delta", { index: 0, delta: steps[0].deltas[0] });
    if (model === "cut-after-first") setImmediate(() => res.socket?.destroy());
    else if (model === "end-early") res.end();
    else if (model === "stream-error") {
      send("error", { error: { code: "RESOURCE_EXHAUSTED", message: "fake failure in the stream" } });
      res.end();
    } else res.once("close", onAbort);
    return undefined;
  }
  steps.forEach((step, index) => {
    send("step.start", { index, step: step.start });
    for (const delta of step.deltas) send("step.delta", { index, delta });
    send("step.stop", { index });
  });
  send("interaction.completed", { interaction: { ...interaction, status, usage } });
  res.write("data: [DONE]\n\n");
  res.end();
  return steps.map((step) => step.whole);
}

function answerSteps(model: string, body: Json, thoughts: boolean): AnswerStep[] {
  const steps: AnswerStep[] = [];
  if (thoughts) {
    const signature = isConversationModel(model) ? signatureOfTurn("gemini-interactions", turnsOf(body.input).length) : FAKE_SIGNATURE;
    steps.push({
      start: { type: "thought" },
      deltas: [
        { type: "thought_summary", content: { type: "text", text: FAKE_THOUGHT } },
        { type: "thought_signature", signature },
      ],
      whole: { type: "thought", signature, summary: [{ type: "text", text: FAKE_THOUGHT }] },
    });
  }
  const functions = ((body.tools ?? []) as Json[]).filter((tool) => tool.type === "function").map((tool) => String(tool.name));
  const answered = Array.isArray(body.input) && body.input.at(-1)?.type === "function_result";
  if (functions.length > 0 && !answered) {
    const calls = functions.length >= 2 ? FAKE_PARALLEL_ARGS.map((args, position) => ({ name: functions[position], args })) : [{ name: functions[0], args: FAKE_PARALLEL_ARGS[0] }];
    calls.forEach(({ name, args }, position) => {
      const json = JSON.stringify(args);
      const id = FAKE_CALL_IDS[position];
      steps.push({
        start: { type: "function_call", id, name, arguments: {} },
        deltas: [json.slice(0, 5), json.slice(5)].map((fragment) => ({ type: "arguments_delta", arguments: fragment })),
        whole: { type: "function_call", id, name, arguments: { ...args } },
      });
    });
    return steps;
  }
  const formats = (Array.isArray(body.response_format) ? body.response_format : [body.response_format]).filter(Boolean) as Json[];
  const texts = formats.some((format) => format.type === "text" && format.mime_type === "application/json") ? ['{"answer":', '"Hello"}'] : `Hello from ${model}`.split(/(?<= )/);
  const deltas: Json[] = texts.map((text) => ({ type: "text", text }));
  const content: Json[] = [{ type: "text", text: texts.join("") }];
  if (formats.some((format) => format.type === "image")) {
    deltas.push({ type: "image", data: FAKE_IMAGE, mime_type: "image/png" });
    content.push({ type: "image", data: FAKE_IMAGE, mime_type: "image/png" });
  }
  if (model.startsWith("lyria")) {
    deltas.push(...FAKE_AUDIO_PARTS.map((data) => ({ type: "audio", data, mime_type: "audio/mpeg" })));
    content.push({ type: "audio", data: Buffer.concat(FAKE_AUDIO_PARTS.map((part) => Buffer.from(part, "base64"))).toString("base64"), mime_type: "audio/mpeg" });
  }
  steps.push({ start: { type: "model_output" }, deltas, whole: { type: "model_output", content } });
  return steps;
}

/**
 * A timeline as the turns the other protocols would send: each user_input
 * step; each run of the model's steps (thoughts, output, calls) as `{model}`;
 * each run of function results as `{results}`. A string input is one turn.
 */
export function turnsOf(input: unknown): Json[] {
  if (!Array.isArray(input)) return [input as Json];
  const turns: Json[] = [];
  for (const step of input as Json[]) {
    const side = step.type === "function_result" ? "results" : step.type === "user_input" ? undefined : "model";
    const last = turns.at(-1);
    if (side && last?.[side]) last[side].push(step);
    else turns.push(side ? { [side]: [step] } : step);
  }
  return turns;
}

/** A "conversation" model checks its signatures as the real API does: one it did not give is refused. */
function foreignSignatureRefusal(body: Json) {
  if (!isConversationModel(String(body.model)) || !Array.isArray(body.input)) return undefined;
  const steps = body.input as Json[];
  if (!steps.some((step) => step.type === "thought" && typeof step.signature === "string" && isForeignSignature("gemini-interactions", step.signature))) return undefined;
  return { status: 400, body: { error: { code: 400, message: "Corrupted thought signature.", status: "INVALID_ARGUMENT" } } };
}

/** A background interaction as GET (and its create) answers it: its steps and usage once completed, Google's `errors` once failed. */
function jobResource(job: FakeJob): Json {
  const created = new Date(0).toISOString();
  const resource: Json = { id: job.id, object: "interaction", model: job.body.model, status: job.status, created, updated: created };
  if (job.status === "failed") resource.errors = [{ code: "INTERNAL", message: "fake video generation failed" }];
  if (job.status !== "completed") return resource;
  const formats = (Array.isArray(job.body.response_format) ? job.body.response_format : [job.body.response_format]).filter(Boolean) as Json[];
  const video = formats.find((format) => format.type === "video");
  const content = video ? [{ type: "video", data: FAKE_VIDEO.toString("base64"), mime_type: "video/mp4" }] : [{ type: "text", text: `Hello from ${job.body.model}` }];
  return { ...resource, steps: [{ type: "model_output", content }], usage: video ? FAKE_VIDEO_USAGE : { ...FAKE_USAGE, total_tokens: 15 } };
}

function sendJson(res: http.ServerResponse, body: Json) {
  res.writeHead(200, { "content-type": "application/json; charset=UTF-8" });
  res.end(JSON.stringify(body));
}

