// checkInputImage: a caller's image URL is fetched from the core's network, so
// unless tasks.fetch_private_urls allows it no connection goes to a loopback,
// private, link-local or unique-local address, redirects included, and every
// failed fetch is answered in the same words. The header is read as the body
// arrives: the fetch stops once the dimensions are known.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { ConnectError } from "@connectrpc/connect";
import { stdSerializers } from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { errorDetailOf } from "../../../core/errors.ts";
import { solidPng } from "../../../core/providers/simulator/media.ts";
import { checkInputImage, IMAGE_FETCH_FAILED, INPUT_IMAGE_LIMITS, type InputImageLimits } from "../../../core/tasks/input-image.ts";

const RED = Buffer.from([255, 0, 0]);

interface ImageServer {
  server: http.Server;
  port: number;
  /** Requests seen, by path. */
  seen: string[];
  /** Bodies still being sent (/endless), to see them stopped. */
  open: Set<http.ServerResponse>;
}

/** /png/WxH, /gif, /missing, /endless (a PNG header, then bytes forever), /redirect?to=URL. */
async function startImageServer(host: string): Promise<ImageServer> {
  const seen: string[] = [];
  const open = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://any");
    seen.push(url.pathname);
    const png = /^\/png\/(\d+)x(\d+)$/.exec(url.pathname);
    if (png) return void res.writeHead(200, { "content-type": "image/png" }).end(solidPng(Number(png[1]), Number(png[2]), RED));
    if (url.pathname === "/gif") return void res.writeHead(200).end(Buffer.from("GIF89a\x10\x00\x10\x00\x00\x00\x00", "latin1"));
    if (url.pathname === "/redirect") return void res.writeHead(302, { location: url.searchParams.get("to")! }).end();
    if (url.pathname === "/endless") {
      open.add(res);
      res.on("close", () => open.delete(res));
      res.writeHead(200, { "content-type": "image/png" });
      res.write(solidPng(300, 200, RED).subarray(0, 33));
      const more = setInterval(() => res.write(Buffer.alloc(1024)), 5);
      res.on("close", () => clearInterval(more));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as AddressInfo).port, seen, open };
}

let v4: ImageServer;
let v6: ImageServer;
beforeAll(async () => {
  v4 = await startImageServer("127.0.0.1");
  v6 = await startImageServer("::1");
});
afterAll(async () => {
  for (const { server } of [v4, v6]) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

const PUBLIC_ONLY: InputImageLimits = { ...INPUT_IMAGE_LIMITS, timeoutMs: 2000 };
const PRIVATE_ALLOWED: InputImageLimits = { ...PUBLIC_ONLY, allowPrivateAddresses: true };

async function refusal(promise: Promise<unknown>): Promise<{ param: string; message: string }> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(ConnectError);
  return { param: errorDetailOf(error as ConnectError)?.param ?? "", message: (error as ConnectError).rawMessage };
}

describe("checkInputImage and private addresses", () => {
  const privateUrls = () => [
    `http://127.0.0.1:${v4.port}/png/100x100`,
    `http://localhost:${v4.port}/png/100x100`,
    `http://[::1]:${v6.port}/png/100x100`,
    `http://[::ffff:127.0.0.1]:${v4.port}/png/100x100`,
    "http://10.0.0.1/png/100x100",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fd00::1]/png/100x100",
    // NAT64 (64:ff9b::/96) judged by the IPv4 address it embeds: loopback, and the cloud metadata address.
    "http://[64:ff9b::7f00:1]/png/100x100",
    "http://[64:ff9b::169.254.169.254]/latest/meta-data/",
  ];

  it("refuses loopback, 10.x, link-local (169.254.169.254), unique-local, NAT64 of those and ::1 with the generic 400, connecting to none, when tasks.fetch_private_urls is off", async () => {
    const seenBefore = v4.seen.length + v6.seen.length;
    const logger = { warn: vi.fn() };
    for (const url of privateUrls()) {
      expect(await refusal(checkInputImage(url, { ...PUBLIC_ONLY, logger })), url).toEqual({ param: "image", message: IMAGE_FETCH_FAILED });
    }
    expect(v4.seen.length + v6.seen.length).toBe(seenBefore);
    // The log has what the caller is not told.
    expect(logger.warn.mock.calls.map(([details]) => details.failure)).toEqual(Array(privateUrls().length).fill("private_address"));
    // As the log line shows it (pino appends each cause's message): the refusal named once, not repeated.
    for (const [details] of logger.warn.mock.calls) {
      expect(stdSerializers.err(details.err).message.match(/is not a public address/g)).toHaveLength(1);
    }
  });

  it("serves loopback over IPv4, IPv6 and a host name when tasks.fetch_private_urls is on", async () => {
    for (const url of privateUrls().slice(0, 4)) expect(await checkInputImage(url, PRIVATE_ALLOWED), url).toEqual({ width: 100, height: 100 });
  });

  it("checks every redirect hop: an allowed host's redirect to a refused one is the generic 400, without a request to the refused one", async () => {
    // 127.0.0.1 stands for a public host here, [::1] for a private one.
    const onlyV4 = { ...PUBLIC_ONLY, isAllowedAddress: (address: string) => address === "127.0.0.1" };
    const toPrivate = `http://127.0.0.1:${v4.port}/redirect?to=${encodeURIComponent(`http://[::1]:${v6.port}/png/100x100`)}`;
    const v6Before = v6.seen.length;
    expect(await refusal(checkInputImage(toPrivate, onlyV4))).toEqual({ param: "image", message: IMAGE_FETCH_FAILED });
    expect(v6.seen.length).toBe(v6Before);
    // The same redirect is followed when its target is allowed.
    const toAllowed = `http://127.0.0.1:${v4.port}/redirect?to=${encodeURIComponent(`http://127.0.0.1:${v4.port}/png/120x60`)}`;
    expect(await checkInputImage(toAllowed, onlyV4)).toEqual({ width: 120, height: 60 });
    expect(await checkInputImage(toPrivate, PRIVATE_ALLOWED)).toEqual({ width: 100, height: 100 });
  });

  it("follows at most 3 redirects", async () => {
    const hop = (to: string) => `http://127.0.0.1:${v4.port}/redirect?to=${encodeURIComponent(to)}`;
    const target = `http://127.0.0.1:${v4.port}/png/100x100`;
    expect(await checkInputImage(hop(hop(hop(target))), PRIVATE_ALLOWED)).toEqual({ width: 100, height: 100 });
    expect(await refusal(checkInputImage(hop(hop(hop(hop(target)))), PRIVATE_ALLOWED))).toEqual({ param: "image", message: IMAGE_FETCH_FAILED });
  });

  it("answers a 404, a body over the cap and a silent host in the same words", async () => {
    const logger = { warn: vi.fn() };
    const limits = { ...PRIVATE_ALLOWED, logger };
    expect(await refusal(checkInputImage(`http://127.0.0.1:${v4.port}/missing`, limits))).toEqual({ param: "image", message: IMAGE_FETCH_FAILED });
    expect(await refusal(checkInputImage(`http://127.0.0.1:${v4.port}/png/400x400`, { ...limits, maxBytes: 64 }))).toEqual({ param: "image", message: IMAGE_FETCH_FAILED });
    expect(logger.warn.mock.calls.map(([details]) => details.failure)).toEqual(["status", "too_large"]);
    // A type that is not JPEG or PNG is about the image, not the host: said as it is.
    expect(await refusal(checkInputImage(`http://127.0.0.1:${v4.port}/gif`, limits))).toEqual({ param: "image", message: "image is not a JPEG or PNG." });
  });
});

describe("checkInputImage's log lines", () => {
  it("never carry a URL's query, whatever the failure (docs/tasks.md: the URL without its query)", async () => {
    const logger = { warn: vi.fn() };
    const limits = { ...PRIVATE_ALLOWED, logger };
    const secret = "?sig=SECRET-TOKEN&user=SECRET-USER";
    const base = `http://127.0.0.1:${v4.port}`;
    const hop = (to: string) => `${base}/redirect?to=${encodeURIComponent(to)}&sig=SECRET-TOKEN`;
    await refusal(checkInputImage(`${base}/missing${secret}`, limits));
    await refusal(checkInputImage(`${base}/png/400x400${secret}`, { ...limits, maxBytes: 64 }));
    await refusal(checkInputImage(hop(hop(hop(hop(`${base}/png/100x100${secret}`)))), limits));
    await refusal(checkInputImage(hop(`ftp://files.example/image.png${secret}`), limits));
    await refusal(checkInputImage(`http://127.0.0.1:1/png/100x100${secret}`, limits));
    await refusal(checkInputImage(`http://10.0.0.1/png/100x100${secret}`, { ...PUBLIC_ONLY, logger }));
    expect(logger.warn.mock.calls.map(([details]) => details.failure)).toEqual(["status", "too_large", "redirect", "redirect", "network", "private_address"]);
    for (const [details, message] of logger.warn.mock.calls) {
      // The line as pino writes it: the error serialized with its message, stack and causes.
      const line = JSON.stringify({ ...details, err: stdSerializers.err(details.err), msg: message });
      expect(line).not.toMatch(/SECRET/);
      // Still enough to tell which URL: its origin and path.
      expect(details.url).toMatch(/^http:\/\/[^?]+\/(missing|png\/\d+x\d+|redirect)$/);
    }
  });
});

describe("checkInputImage reading the header only", () => {
  it("answers the dimensions from a body that never ends, and stops its read", async () => {
    expect(await checkInputImage(`http://127.0.0.1:${v4.port}/endless`, PRIVATE_ALLOWED)).toEqual({ width: 300, height: 200 });
    await vi.waitFor(() => expect(v4.open.size).toBe(0));
  });
});
