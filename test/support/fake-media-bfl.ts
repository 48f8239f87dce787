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
// "Request Moderated" (at the first poll), STALL_PROMPT stays Pending.
import type http from "node:http";
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
}

export async function startFakeBfl(options: BflOptions = {}): Promise<FakeMediaUpstream> {
  const key = options.key ?? BFL_KEY;
  const jobs = new JobBook(options);
  const cdn = new AssetHost(options.assetTtlMs ?? 10 * 60_000, AZURE_SAS_EXPIRED, options.now);
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
    if (typeof body.prompt !== "string") {
      return sendJson(res, 422, { detail: [{ type: "missing", loc: ["body", "prompt"], msg: "Field required", input: body }] });
    }
    const id = `00000000-0000-4000-8000-${String(jobs.jobs.size + 1).padStart(12, "0")}`;
    jobs.create(id, model, body.prompt, { seed: body.seed ?? 42 });
    const outputMegapixels = ((body.width ?? 1024) * (body.height ?? 768)) / 1_000_000;
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
    const sample = cdn.publish(`${job.id}/sample.png`, TINY_PNG, "image/png");
    const start = job.createdAt / 1000;
    const end = job.finishedAt! / 1000;
    return { sample, prompt: job.prompt, seed: job.details.seed, start_time: start, end_time: end, duration: end - start };
  }

  return { ...upstream, origin, jobs, polls: (jobId) => jobs.jobs.get(jobId)?.polls ?? 0 };
}
