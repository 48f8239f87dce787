// A fake of Black Forest Labs' FLUX API, for tests (docs/media-protocols.md, "BFL").
//   POST /v1/{model}            with `x-key`: {id, polling_url, cost, input_mp, output_mp};
//        the body needs a prompt.
//   GET  /v1/get_result?id=...  (the polling_url) with `x-key`: one poll, answered
//        {id, status, result, progress, details, preview}; status Pending, then Ready
//        with result.sample, a signed URL that answers 403 (Azure SAS) after
//        assetTtlMs (default 10 minutes, as BFL's delivery URLs).
// A missing or wrong `x-key` is a 403 {"detail": ...}; an unknown id answers status
// "Task not found". Prompts pick failures (fake-media-common.ts): FAIL_PROMPT ends
// "Error", MODERATE_PROMPT "Content Moderated" (at the finishing poll), REFUSE_PROMPT
// "Request Moderated" (at the first poll), STALL_PROMPT stays Pending; `outcomeOf`
// picks a job's outcome by its body instead (a seed, say).
// The body is checked per model family as BFL's API reference has it: FLUX.2 and
// FLUX1.1 [pro] take width and height (FLUX.2: multiples of 16, 64 to 4 MP),
// Kontext and Ultra an aspect_ratio between 21:9 and 9:21; input_image,
// input_image_2... are URLs or base64 (FLUX.2 up to 8, Kontext up to 4), and a
// text-only model takes none. Anything else is BFL's 422.
import type http from "node:http";
import { solidPng } from "../../core/providers/simulator/media.ts";
import { AssetHost, AZURE_SAS_EXPIRED, JobBook, type FakeJob, type FakeMediaUpstream, type MediaFakeOptions, safely, sendJson, splitPath, TINY_PNG } from "./fake-media-common.ts";
import { startRecordingServer } from "./recording-server.ts";

export const BFL_KEY = "bfl-test-key";
export const BFL_FAILURE_DETAILS = { error: "Generation failed." };
export const BFL_MODERATION_DETAILS = { "Moderation Reasons": ["Derivative Works Filter"] };
/** The credits (1 credit = 0.01 USD) the fake says a task costs, as FLUX.2 endpoints answer `cost`. */
export const BFL_COST = 4;

export interface BflOptions extends MediaFakeOptions {
  key?: string;
  /**
   * The host name the polling_url names instead of the server's own 127.0.0.1 (for
   * example "localhost": the same server under another name), as BFL's global endpoint
   * answers a polling_url on a regional host. A poller must use the URL as given.
   */
  pollingHost?: string;
  /**
   * Ready images have the width and height the job asked (or BFL's default for the
   * model) instead of TINY_PNG, so a charge by size can be checked (default false:
   * other tests compare the bytes with TINY_PNG).
   */
  sizedImages?: boolean;
  /** The outcome of a job by its checked body, where it gives one (else the prompt's): one job of several failed. */
  outcomeOf?: (body: Record<string, any>) => FakeJob["outcome"] | undefined;
}

/** The width and height of the image BFL makes for a checked body (width/height, else ~1 MP at aspect_ratio, else 1024x768). */
export function bflImageSize(body: Record<string, any>): { width: number; height: number } {
  if (typeof body.width === "number" && typeof body.height === "number") return { width: body.width, height: body.height };
  const ratio = typeof body.aspect_ratio === "string" ? /^(\d+):(\d+)$/.exec(body.aspect_ratio) : null;
  if (ratio) {
    // One megapixel at that ratio, in multiples of 16, as Kontext answers.
    const aspect = Number(ratio[1]) / Number(ratio[2]);
    const width = Math.round(Math.sqrt(1024 * 1024 * aspect) / 16) * 16;
    return { width, height: Math.round(width / aspect / 16) * 16 };
  }
  return { width: 1024, height: 768 };
}

/** The most input images each family takes (0: text only), and whether it takes a ratio rather than a size. */
function familyOf(model: string): { inputs: number; ratio: boolean } {
  if (model.startsWith("flux-2-")) return { inputs: 8, ratio: false };
  if (model.startsWith("flux-kontext")) return { inputs: 4, ratio: true };
  if (model === "flux-pro-1.1-ultra") return { inputs: 0, ratio: true };
  return { inputs: 0, ratio: false };
}

/** BFL's 422 detail for the first thing wrong in the body, or undefined when BFL takes it. */
function invalidBody(model: string, body: Record<string, any>): string | undefined {
  if (typeof body.prompt !== "string") return "Field required: prompt";
  const family = familyOf(model);
  if (family.ratio && (body.width !== undefined || body.height !== undefined)) return "Extra inputs are not permitted: width, height";
  if (!family.ratio && body.aspect_ratio !== undefined) return "Extra inputs are not permitted: aspect_ratio";
  if (body.aspect_ratio !== undefined) {
    const ratio = /^(\d+):(\d+)$/.exec(String(body.aspect_ratio));
    const value = ratio ? Number(ratio[1]) / Number(ratio[2]) : 0;
    if (!ratio || value > 21 / 9 || value < 9 / 21) return "Aspect ratio must be between 21:9 and 9:21";
  }
  if (model.startsWith("flux-2-") && (body.width !== undefined || body.height !== undefined)) {
    const { width, height } = body;
    if (![width, height].every((side) => Number.isInteger(side) && side >= 64 && side % 16 === 0)) return "width and height must be multiples of 16, at least 64";
    if (width * height > 4 * 1024 * 1024) return "width x height must be at most 4 megapixels";
  }
  const inputs = Object.keys(body).filter((field) => /^input_image(_\d+)?$/.test(field));
  if (inputs.length > family.inputs) return family.inputs === 0 ? `Extra inputs are not permitted: ${inputs.join(", ")}` : `At most ${family.inputs} input images`;
  for (const field of inputs) {
    const value = body[field];
    if (typeof value !== "string" || !(/^https?:\/\//.test(value) || /^[A-Za-z0-9+/]+={0,2}$/.test(value))) return `${field} must be a URL or base64`;
  }
  return undefined;
}

export async function startFakeBfl(options: BflOptions = {}): Promise<FakeMediaUpstream> {
  const key = options.key ?? BFL_KEY;
  const jobs = new JobBook(options);
  const cdn = new AssetHost(options.assetTtlMs ?? 10 * 60_000, AZURE_SAS_EXPIRED, options.now, options.resultFile);
  let origin = "";

  const upstream = await startRecordingServer(
    "",
    safely((request, res) => {
      if (cdn.serve(request, res)) return;
      const given = request.headers["x-key"];
      if (given === undefined) return sendJson(res, 403, { detail: "Not authenticated" });
      if (given !== key) return sendJson(res, 403, { detail: "Invalid API key" });
      const { pathname, query } = splitPath(request.path);
      if (request.method === "GET" && pathname === "/v1/get_result") return getResult(query.get("id") ?? "", res);
      const create = /^\/v1\/([a-z0-9.-]+)$/.exec(pathname);
      if (request.method === "POST" && create) return createTask(create[1], request.body, res);
      sendJson(res, 404, { detail: "Not Found" });
    }),
  );
  origin = new URL(upstream.url).origin;
  cdn.setOrigin(origin);
  const pollingOrigin = options.pollingHost ? origin.replace("127.0.0.1", options.pollingHost) : origin;

  function createTask(model: string, body: Record<string, any>, res: http.ServerResponse) {
    const invalid = invalidBody(model, body);
    if (invalid) return sendJson(res, 422, { detail: [{ type: "value_error", loc: ["body"], msg: invalid, input: body }] });
    const id = `00000000-0000-4000-8000-${String(jobs.jobs.size + 1).padStart(12, "0")}`;
    const size = bflImageSize(body);
    const job = jobs.create(id, model, body.prompt, { seed: body.seed ?? 42, ...size });
    job.outcome = options.outcomeOf?.(body) ?? job.outcome;
    const outputMegapixels = (size.width * size.height) / 1_000_000;
    sendJson(res, 200, { id, polling_url: `${pollingOrigin}/v1/get_result?id=${id}`, cost: BFL_COST, input_mp: 0, output_mp: outputMegapixels });
  }

  function getResult(id: string, res: http.ServerResponse) {
    const job = jobs.jobs.get(id);
    if (!job) return sendJson(res, 200, { id, status: "Task not found", result: null, progress: null, details: null, preview: null });
    const phase = jobs.poll(job);
    const base = { id, result: null, progress: null, details: null, preview: null };
    if (phase === "queued") return sendJson(res, 200, { ...base, status: "Pending", progress: 0 });
    if (phase === "running" || phase === "stalled") return sendJson(res, 200, { ...base, status: "Pending", progress: 0.5 });
    if (phase === "failed") return sendJson(res, 200, { ...base, status: "Error", details: BFL_FAILURE_DETAILS });
    if (phase === "moderated") return sendJson(res, 200, { ...base, status: "Content Moderated", details: BFL_MODERATION_DETAILS });
    if (phase === "refused") return sendJson(res, 200, { ...base, status: "Request Moderated", details: BFL_MODERATION_DETAILS });
    sendJson(res, 200, { ...base, status: "Ready", progress: 1, result: readyResult(job) });
  }

  function readyResult(job: FakeJob) {
    const bytes = options.sizedImages ? solidPng(job.details.width, job.details.height, Buffer.from([255, 0, 0])) : TINY_PNG;
    const sample = cdn.publish(`${job.id}/sample.png`, bytes, "image/png");
    const start = job.createdAt / 1000;
    const end = job.finishedAt! / 1000;
    return { sample, prompt: job.prompt, seed: job.details.seed, start_time: start, end_time: end, duration: end - start };
  }

  return { ...upstream, origin, jobs, polls: (jobId) => jobs.jobs.get(jobId)?.polls ?? 0 };
}
