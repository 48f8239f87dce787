// What the five fake media upstreams share (fake-media-openai/bfl/pollo/kling/vertex.ts):
// tiny valid media made in code, a deterministic job state machine that counts
// polls per job, and a CDN of URLs that stop working after a set time.
// docs/media-protocols.md describes the real protocols the fakes imitate.
import type http from "node:http";
import { solidPng } from "../../core/providers/simulator/media.ts";
import { tinyMp4 } from "../../core/providers/simulator/mp4.ts";
import type { Answer, FakeUpstream, RecordedRequest } from "./recording-server.ts";

/** A prompt containing this ends its job failed, in the provider's own failure shape. */
export const FAIL_PROMPT = "[fail]";
/** A prompt containing this ends its job refused by the provider's output moderation. */
export const MODERATE_PROMPT = "[moderate]";
/** A prompt containing this is refused by input moderation, where the provider has it (BFL: Request Moderated). */
export const REFUSE_PROMPT = "[refuse]";
/** A prompt containing this never finishes: the job stays running (for timeouts). */
export const STALL_PROMPT = "[stall]";

/** A 1x1 opaque red PNG (signature, IHDR, IDAT, IEND, every CRC right), made as the simulator makes its images. */
export const TINY_PNG: Buffer = solidPng(1, 1, Buffer.from([255, 0, 0]));
/**
 * A minimal well-formed MP4: ftyp (isom), moov with a one-second mvhd, and an
 * empty mdat. It has no tracks, so a player shows nothing, but every box parses.
 * Made as the simulator makes its videos.
 */
export const TINY_MP4: Buffer = tinyMp4();

/** How a fake behaves over time: at which poll a job starts running and finishes, and how long its URLs live. */
export interface MediaFakeOptions {
  /** The 1-based poll at which a job is first reported running (default 2). */
  runningAtPoll?: number;
  /** The 1-based poll at which a job is first reported finished (default 3). */
  doneAtPoll?: number;
  /** How long a result URL works after the job finished, in ms (default: the provider's). */
  assetTtlMs?: number;
  /** The fake's clock, in ms since the epoch (default Date.now); a test moves it to expire URLs. */
  now?: () => number;
  /** What every result URL serves instead of the media made (a CDN answering an HTML page, say). */
  resultFile?: ResultFile;
}

/** A result URL's body and Content-Type; `body` may write it in steps. */
export interface ResultFile {
  contentType: string;
  bytes?: Buffer;
  /** Writes the body itself (and ends it), instead of `bytes`. */
  write?(res: http.ServerResponse): void;
}

export type JobOutcome = "succeeded" | "failed" | "moderated" | "refused" | "stalled";
export type JobPhase = "queued" | "running" | JobOutcome;

export interface FakeJob {
  id: string;
  model: string;
  prompt: string;
  outcome: JobOutcome;
  createdAt: number;
  /** When the job was first reported finished (the moment its URLs start to age). */
  finishedAt?: number;
  polls: number;
  /** What the protocol keeps about the job (kind, sizes, sample count, ...). */
  details: Record<string, any>;
}

/** The outcome a prompt asks for. */
export function outcomeOf(prompt: string): JobOutcome {
  if (prompt.includes(FAIL_PROMPT)) return "failed";
  if (prompt.includes(MODERATE_PROMPT)) return "moderated";
  if (prompt.includes(REFUSE_PROMPT)) return "refused";
  if (prompt.includes(STALL_PROMPT)) return "stalled";
  return "succeeded";
}

/** The jobs of one fake: ids in order of creation, each advanced one step per poll. */
export class JobBook {
  readonly jobs = new Map<string, FakeJob>();
  private readonly runningAtPoll: number;
  private readonly doneAtPoll: number;
  private readonly now: () => number;

  constructor(options: MediaFakeOptions) {
    this.runningAtPoll = options.runningAtPoll ?? 2;
    this.doneAtPoll = options.doneAtPoll ?? 3;
    this.now = options.now ?? Date.now;
  }

  create(id: string, model: string, prompt: string, details: Record<string, any> = {}): FakeJob {
    const job: FakeJob = { id, model, prompt, outcome: outcomeOf(prompt), createdAt: this.now(), polls: 0, details };
    this.jobs.set(id, job);
    return job;
  }

  /** Counts one poll of the job and answers the phase it is now in. Input moderation shows at the first poll. */
  poll(job: FakeJob): JobPhase {
    job.polls += 1;
    return this.phaseOf(job);
  }

  /** The phase without counting a poll. */
  phaseOf(job: FakeJob): JobPhase {
    if (job.outcome === "refused" && job.polls >= 1) return this.finish(job);
    if (job.polls >= this.doneAtPoll && job.outcome !== "stalled") return this.finish(job);
    if (job.polls >= this.runningAtPoll) return "running";
    return "queued";
  }

  private finish(job: FakeJob): JobOutcome {
    job.finishedAt ??= this.now();
    return job.outcome;
  }

  /** How many times each job was polled, by id. */
  pollCounts(): Record<string, number> {
    return Object.fromEntries([...this.jobs.values()].map((job) => [job.id, job.polls]));
  }
}

/** How a CDN answers a URL that has expired. */
export interface ExpiredAnswer {
  status: number;
  contentType: string;
  body: string;
}

/** Azure Blob storage's answer to a SAS URL past its expiry (BFL delivery and OpenAI image URLs are such URLs). */
export const AZURE_SAS_EXPIRED: ExpiredAnswer = {
  status: 403,
  contentType: "application/xml",
  body: '<?xml version="1.0" encoding="utf-8"?><Error><Code>AuthenticationFailed</Code><Message>Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature.\nSigned expiry time has passed.</Message></Error>',
};

/** A plain CDN's answer to a file that is gone. */
export const CDN_NOT_FOUND: ExpiredAnswer = { status: 404, contentType: "application/xml", body: "<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>" };

interface HostedAsset {
  bytes: Buffer;
  contentType: string;
  /** ms since the epoch after which the URL answers `expired`. */
  expiresAt: number;
}

/** Result files served from the fake's own server under /cdn/, each URL dead after its expiry. */
export class AssetHost {
  private readonly assets = new Map<string, HostedAsset>();
  private origin = "";
  private readonly now: () => number;
  private readonly ttlMs: number;
  private readonly expired: ExpiredAnswer;

  private readonly resultFile: ResultFile | undefined;

  constructor(ttlMs: number, expired: ExpiredAnswer, now: (() => number) | undefined, resultFile?: ResultFile) {
    this.resultFile = resultFile;
    this.ttlMs = ttlMs;
    this.expired = expired;
    this.now = now ?? Date.now;
  }

  /** Set once the server listens. */
  setOrigin(origin: string) {
    this.origin = origin;
  }

  /** A URL for the bytes that works for the TTL from the first publish of the name; later publishes answer the same URL. */
  publish(name: string, bytes: Buffer, contentType: string): string {
    const existing = this.assets.get(name);
    if (!existing) this.assets.set(name, { bytes, contentType, expiresAt: this.now() + this.ttlMs });
    // Signed URLs carry their expiry in the query, as SAS and CloudFront URLs do.
    const expiresAt = this.assets.get(name)!.expiresAt;
    return `${this.origin}/cdn/${name}?se=${expiresAt}&sig=fake`;
  }

  /** Serves GET /cdn/<name>; false when the path is not a CDN path. */
  serve(request: RecordedRequest, res: http.ServerResponse): boolean {
    const match = /^\/cdn\/([^?]+)/.exec(request.path);
    if (!match) return false;
    const asset = this.assets.get(decodeURIComponent(match[1]));
    if (!asset) {
      send(res, CDN_NOT_FOUND.status, CDN_NOT_FOUND.body, CDN_NOT_FOUND.contentType);
      return true;
    }
    if (this.now() >= asset.expiresAt) {
      send(res, this.expired.status, this.expired.body, this.expired.contentType);
      return true;
    }
    if (this.resultFile?.write) {
      res.writeHead(200, { "content-type": this.resultFile.contentType });
      this.resultFile.write(res);
      return true;
    }
    const { bytes, contentType } = this.resultFile?.bytes ? { bytes: this.resultFile.bytes, contentType: this.resultFile.contentType } : asset;
    res.writeHead(200, { "content-type": contentType, "content-length": bytes.length });
    res.end(bytes);
    return true;
  }
}

/** A fake upstream that also says how each of its jobs was polled. */
export interface FakeMediaUpstream extends FakeUpstream {
  /** The origin (scheme, host, port) of the server, for URLs outside the API base. */
  origin: string;
  jobs: JobBook;
  /** How many times the job was polled (0 for an unknown id). */
  polls(jobId: string): number;
}

export function send(res: http.ServerResponse, status: number, body: string | Buffer, contentType: string) {
  res.writeHead(status, { "content-type": contentType });
  res.end(body);
}

export function sendJson(res: http.ServerResponse, status: number, body: unknown) {
  send(res, status, JSON.stringify(body), "application/json");
}

/** An Answer that may be async: a thrown error becomes a 500, never an unhandled rejection. */
export function safely(answer: (request: RecordedRequest, res: http.ServerResponse) => void | Promise<void>): Answer {
  return (request, res) => {
    Promise.resolve()
      .then(() => answer(request, res))
      .catch((error: unknown) => {
        if (!res.headersSent) sendJson(res, 500, { fakeError: String(error) });
        else res.end();
      });
  };
}

/**
 * The first field of a JSON object that its API does not take, as a path
 * (`input.lenght`); undefined when every field is known. `known` lists an
 * object's fields, and for a field holding an object (or a list of objects)
 * the fields of that object: a renamed field is refused as the provider would,
 * not silently ignored.
 */
export type KnownFields = { [field: string]: KnownFields | true };

export function unknownField(value: unknown, known: KnownFields, path = ""): string | undefined {
  if (value === null || typeof value !== "object") return undefined;
  const objects = Array.isArray(value) ? value.map((item, index) => [item, `${path}[${index}]`] as const) : [[value, path] as const];
  for (const [object, at] of objects) {
    if (object === null || typeof object !== "object") continue;
    for (const [field, inner] of Object.entries(object)) {
      const rule = known[field];
      const fieldPath = at ? `${at}.${field}` : field;
      if (!rule) return fieldPath;
      if (rule !== true) {
        const found = unknownField(inner, rule, fieldPath);
        if (found) return found;
      }
    }
  }
  return undefined;
}

/** The path without its query, and the query. */
export function splitPath(path: string): { pathname: string; query: URLSearchParams } {
  const url = new URL(path, "http://fake");
  return { pathname: url.pathname, query: url.searchParams };
}

/** ms to whole seconds, as the APIs' Unix timestamps are. */
export function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}
