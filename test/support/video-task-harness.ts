// What the media task tests do through a gateway's public endpoints: create a
// video or image task, read it, wait until it has ended, download a hosted
// asset, read an organisation's balance, check that another organisation sees
// nothing; a local server of input images for image-to-video; and the whole
// stack of a provider's video test (its fake, the gateway, the image server).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, vi } from "vitest";
import type { RouterConfig } from "../../core/config/schema.ts";
import { solidPng } from "../../core/providers/simulator/media.ts";
import type { FakeMediaUpstream } from "./fake-media-common.ts";
import { startGateway, TEST_KEY, type Gateway } from "./harness.ts";
import { OTHER_KEY, TASK_ACCOUNTS_ENV } from "./media-task-config.ts";

/** How long a task may take to end in a test, and how often it is read meanwhile. */
export const TASK_DONE = { timeout: 10_000, interval: 10 };
export const DAY_MS = 24 * 60 * 60_000;

export type JsonAnswer = { status: number; json: Record<string, any> };
export interface CreateOptions {
  key?: string;
  idempotencyKey?: string;
  /** The `cache_key` header (docs/tasks.md, "Cache"). */
  cacheKey?: string;
}

/** The status words a task's result ends with, in every style (`succeed` is the per-generation style's). */
const ENDED = ["completed", "failed", "succeed"];

/** Ended, in whichever style: `status` at the top (progress, base64, per-generation) or in `data` (data style). */
export const hasEnded = (result: Record<string, any>) => ENDED.includes(result.status) || ENDED.includes(result.data?.status);

const headersOf = (key: string, idempotencyKey?: string, cacheKey?: string): Record<string, string> => ({
  authorization: `Bearer ${key}`,
  "content-type": "application/json",
  ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
  ...(cacheKey ? { cache_key: cacheKey } : {}),
});

/**
 * One gateway's task endpoints for one model: `videos` (POST /videos, GET
 * /videos/{id}) or `images` (POST /images/generations, GET /images/{id}).
 */
export function taskClient(gateway: Gateway, options: { kind: "videos" | "images"; model: string; key?: string; organizationId?: string }) {
  const ownKey = options.key ?? TEST_KEY;
  const organizationId = options.organizationId ?? "org_test";
  const createPath = options.kind === "videos" ? "/videos" : "/images/generations";

  const post = async (path: string, body: unknown, given: CreateOptions = {}): Promise<JsonAnswer> => {
    const response = await fetch(`${gateway.apiUrl}${path}`, { method: "POST", headers: headersOf(given.key ?? ownKey, given.idempotencyKey, given.cacheKey), body: JSON.stringify(body) });
    return { status: response.status, json: (await response.json()) as Record<string, any> };
  };
  const create = (body: Record<string, unknown>, given: CreateOptions = {}) => post(createPath, { model: options.model, ...body }, given);
  const read = async (id: string, key = ownKey): Promise<JsonAnswer> => {
    const response = await fetch(`${gateway.apiUrl}/${options.kind}/${id}`, { headers: headersOf(key) });
    return { status: response.status, json: (await response.json()) as Record<string, any> };
  };
  /** The task's result once it has ended (completed or failed), read every `wait.interval` ms. */
  const finished = (id: string, wait = TASK_DONE) =>
    vi.waitFor(async () => {
      const { json } = await read(id);
      expect(hasEnded(json), JSON.stringify(json)).toBe(true);
      return json;
    }, wait);
  /** Creates a task that must be accepted (200), answering its id. */
  const created = async (body: Record<string, unknown>, given: CreateOptions = {}) => {
    const answer = await create(body, given);
    expect(answer.status, JSON.stringify(answer.json)).toBe(200);
    return answer.json.taskId as string;
  };
  /** The organisation's balance once every settlement has been written, in nanos. */
  const balance = async (organization = organizationId) => {
    await gateway.core.accounts.idle();
    return gateway.core.accounts.stores.credits.balance(organization);
  };
  /** A hosted asset, all of it or the Range given (`bytes=4-11`). */
  /** The asset through the authenticated route: the signed link's query left out, the key sent. */
  const download = (url: string, key = ownKey, range?: string) => fetch(keyedAssetUrl(url), { headers: { authorization: `Bearer ${key}`, ...(range ? { range } : {}) } });
  /** The stored task record, as the core keeps it. */
  const stored = async (id: string) => (await gateway.core.tasks.store.get(organizationId, id))!;

  /** The hosted asset at `url` is served to the owner as `mediaType`, byte for byte `bytes`. */
  const expectAsset = async (url: string, bytes: Buffer, mediaType: string) => {
    const asset = await download(url);
    expect([asset.status, asset.headers.get("content-type")]).toEqual([200, mediaType]);
    expect(Buffer.from(await asset.arrayBuffer()).equals(bytes)).toBe(true);
  };

  /**
   * Another organisation gets 404 task_not_found for the task under each id
   * given (its own id, a provider-prefixed one) and 404 for its asset, while
   * the owner reads both.
   */
  const expectHiddenFromOthers = async (taskId: string, assetUrl: string, otherIds: string[] = []) => {
    for (const id of [taskId, ...otherIds]) {
      const other = await read(id, OTHER_KEY);
      expect([other.status, other.json.error?.code]).toEqual([404, "task_not_found"]);
      expect((await read(id)).json.chat_id).toBe(taskId);
    }
    expect((await download(assetUrl, OTHER_KEY)).status).toBe(404);
    expect((await download(assetUrl)).status).toBe(200);
  };

  return { post, create, created, read, finished, balance, download, stored, expectAsset, expectHiddenFromOthers };
}

export type TaskClient = ReturnType<typeof taskClient>;

/** A signed asset link's authenticated route (`/api/v1/assets/{task_id}/{index}`): the link without its query. */
export function keyedAssetUrl(url: string): string {
  const parsed = new URL(url);
  parsed.search = "";
  return parsed.toString();
}

/**
 * A local server of input images: a PNG of the shape the path asks
 * (`/WxH.png`), and under `/once/` only at the first request (a URL that
 * dies, as a file host's may).
 */
export async function startInputImages(): Promise<{ origin: string; url: (path: string) => string; close: () => Promise<void> }> {
  const servedOnce = new Set<string>();
  const server = http.createServer((req, res) => {
    const shape = /^(?:\/once)?\/(\d+)x(\d+)\.png$/.exec(req.url ?? "");
    if (!shape || servedOnce.has(req.url!)) return void res.writeHead(404).end();
    if (req.url!.startsWith("/once/")) servedOnce.add(req.url!);
    res.writeHead(200, { "content-type": "image/png" }).end(solidPng(Number(shape[1]), Number(shape[2]), Buffer.from([0, 128, 255])));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, url: (path) => `${origin}${path}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

export interface VideoTaskStack {
  upstream: FakeMediaUpstream;
  gateway: Gateway;
  /** The gateway's video endpoints for the model under test, as org_test. */
  client: TaskClient;
  /** A 2:1 PNG the gateway can fetch and check as an input image. */
  imageUrl: string;
}

/**
 * A provider's fake, the input image server and a gateway configured for the
 * fake, started before the calling file's (or describe block's) tests and
 * closed after them; the fields are filled in by beforeAll.
 */
export function useVideoTaskGateway(setup: {
  model: string;
  startUpstream: () => Promise<FakeMediaUpstream>;
  config: (upstreamUrl: string) => RouterConfig;
  /** The provider's key variables (both organisations' keys are added). */
  env: Record<string, string>;
}): VideoTaskStack {
  const stack = {} as VideoTaskStack;
  let images: Awaited<ReturnType<typeof startInputImages>> | undefined;
  beforeAll(async () => {
    images = await startInputImages();
    stack.imageUrl = images.url("/2x1.png");
    stack.upstream = await setup.startUpstream();
    stack.gateway = await startGateway(setup.config(stack.upstream.url), { env: { ...setup.env, ...TASK_ACCOUNTS_ENV } });
    stack.client = taskClient(stack.gateway, { kind: "videos", model: setup.model });
  });
  afterAll(async () => {
    await stack.gateway?.close();
    await stack.upstream?.close();
    await images?.close();
  });
  return stack;
}
