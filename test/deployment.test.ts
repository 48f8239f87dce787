// The real entry points as an operator runs them: child processes on ephemeral
// ports, found through their "listening" log lines, used with the official
// openai SDK. Single process (npm start), split (start:core + start:gateway),
// the generated development key, and configuration errors at start.
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http2 from "node:http2";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CORE_ENTRY, GATEWAY_ENTRY, logLine, spawnEntry, stopAllEntries, type SpawnedEntry } from "./support/spawn-entry.ts";

const TIMEOUT = 30_000;

// Whatever a failed test left running is stopped as an operator would.
afterAll(stopAllEntries);

function sdk(gatewayUrl: string, apiKey: string) {
  return new OpenAI({ apiKey, baseURL: `${gatewayUrl}/api/v1`, maxRetries: 0, timeout: 20_000 });
}

const MESSAGES = [{ role: "user" as const, content: "hello there" }];

/** The simulator's echo answer through the SDK, as JSON and as a stream. */
async function expectEchoAnswers(client: OpenAI) {
  const completion = await client.chat.completions.create({ model: "simulator/echo", messages: MESSAGES });
  expect(completion).toMatchObject({
    object: "chat.completion",
    model: "echo",
    choices: [{ index: 0, message: { role: "assistant", content: "You said: hello there" }, finish_reason: "stop" }],
    usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 },
  });
  expect(completion.id).toMatch(/^rtr_/);

  const stream = await client.chat.completions.create({ model: "simulator/echo", messages: MESSAGES, stream: true });
  let text = "";
  const finishReasons: (string | null)[] = [];
  let usage: OpenAI.CompletionUsage | undefined;
  let chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    expect(chunk.object).toBe("chat.completion.chunk");
    text += chunk.choices[0]?.delta.content ?? "";
    if (chunk.choices[0]?.finish_reason) finishReasons.push(chunk.choices[0].finish_reason);
    if (chunk.usage) usage = chunk.usage;
  }
  expect(text).toBe("You said: hello there");
  expect(chunks).toBeGreaterThan(2);
  expect(finishReasons).toEqual(["stop"]);
  expect(usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 });
}

async function expectRejectedKey(client: OpenAI) {
  const error = await client.chat.completions.create({ model: "simulator/echo", messages: MESSAGES }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
  expect((error as InstanceType<typeof OpenAI.AuthenticationError>).status).toBe(401);
}

/** One Connect-protocol unary call over cleartext HTTP/2, as any internal client could make. */
async function connectUnary(baseUrl: string, path: string, body: unknown): Promise<{ status: number; json: any }> {
  const session = http2.connect(baseUrl);
  try {
    const request = session.request({ ":method": "POST", ":path": path, "content-type": "application/json" });
    request.end(JSON.stringify(body));
    const [headers] = (await once(request, "response")) as [http2.IncomingHttpHeaders];
    let text = "";
    request.setEncoding("utf8");
    for await (const chunk of request) text += chunk;
    return { status: Number(headers[":status"]), json: JSON.parse(text) };
  } finally {
    session.close();
  }
}

const DEV_KEY_LINE = /^Development API key \(set ROUTER_DEV_KEY to choose your own\): (\S+)$/;

describe("npm start: gateway and core in one process", { timeout: TIMEOUT }, () => {
  const devKey = "sk-deployment-test-" + process.pid;
  let gateway: SpawnedEntry;
  let gatewayUrl: string;
  let coreUrl: string;

  beforeAll(async () => {
    gateway = spawnEntry(GATEWAY_ENTRY, { PORT: "0", GRPC_PORT: "0", ROUTER_DEV_KEY: devKey });
    coreUrl = await gateway.waitForListening(/^core listening/);
    gatewayUrl = await gateway.waitForListening(/^gateway listening$/);
  }, TIMEOUT);

  it("logs both listening addresses on distinct ephemeral ports, and prints no key when one is set", () => {
    expect(gatewayUrl).not.toBe(coreUrl);
    expect(gateway.stdoutLines.some((line) => DEV_KEY_LINE.test(line))).toBe(false);
  });

  it("answers the openai SDK, JSON and stream, from simulator/echo on the embedded default config", async () => {
    await expectEchoAnswers(sdk(gatewayUrl, devKey));
  });

  it("refuses another key", async () => {
    await expectRejectedKey(sdk(gatewayUrl, "sk-not-the-dev-key"));
  });

  it("serves the bundled catalogue", async () => {
    const page = await sdk(gatewayUrl, devKey).models.list();
    const ids = page.data.map((m) => m.id);
    expect(ids).toContain("simulator/echo");
    expect(ids).toContain("openai/gpt-4o");
  });

  it("also serves the core on GRPC_PORT", async () => {
    const { status, json } = await connectUnary(coreUrl, "/router.v1.CatalogueService/GetModel", { id: "simulator/echo" });
    expect(status).toBe(200);
    expect(json.model).toMatchObject({ id: "simulator/echo", isActive: true });
  });

  it("stops cleanly on SIGTERM", async () => {
    expect(await gateway.stop()).toEqual({ code: 0, signal: null });
  });
});

/** Whether this machine has the IPv6 loopback (some containers have none). */
async function hasIpv6Loopback(): Promise<boolean> {
  const server = net.createServer();
  const listened = await new Promise<boolean>((resolve) => server.once("error", () => resolve(false)).listen(0, "::1", () => resolve(true)));
  if (listened) await new Promise((resolve) => server.close(resolve));
  return listened;
}

describe("npm start with HOST=::1", { timeout: TIMEOUT }, async () => {
  const ipv6 = await hasIpv6Loopback();
  it.skipIf(!ipv6)("logs both addresses as valid URLs, the IPv6 address in brackets, and answers on them", async () => {
    const devKey = "sk-deployment-v6-" + process.pid;
    const gateway = spawnEntry(GATEWAY_ENTRY, { PORT: "0", GRPC_PORT: "0", HOST: "::1", ROUTER_DEV_KEY: devKey });
    const urlOf = async (msg: RegExp) => logLine(await gateway.waitForLine((line) => msg.test(logLine(line)?.msg ?? ""), `logging ${msg}`))?.url ?? "";
    const coreUrl = await urlOf(/^core listening/);
    const gatewayUrl = await urlOf(/^gateway listening$/);
    for (const url of [coreUrl, gatewayUrl]) expect(url).toMatch(/^http:\/\/\[::1\]:[1-9]\d*$/);
    await expectEchoAnswers(sdk(gatewayUrl, devKey));
    expect((await connectUnary(coreUrl, "/router.v1.CatalogueService/GetModel", { id: "simulator/echo" })).status).toBe(200);
    expect(await gateway.stop()).toEqual({ code: 0, signal: null });
  });
});

describe("npm start without ROUTER_DEV_KEY", { timeout: TIMEOUT }, () => {
  it("prints a generated development key that works", async () => {
    const gateway = spawnEntry(GATEWAY_ENTRY, { PORT: "0", GRPC_PORT: "0" });
    const keyLine = await gateway.waitForLine((line) => DEV_KEY_LINE.test(line), "printing a development key");
    const key = DEV_KEY_LINE.exec(keyLine)![1];
    expect(key.length).toBeGreaterThanOrEqual(20);
    const url = await gateway.waitForListening(/^gateway listening$/);
    await expectEchoAnswers(sdk(url, key));
    await expectRejectedKey(sdk(url, key + "x"));
    expect(await gateway.stop()).toEqual({ code: 0, signal: null });
  });

  it("generates a different key each start", async () => {
    const keys = await Promise.all(
      [1, 2].map(async () => {
        const gateway = spawnEntry(GATEWAY_ENTRY, { PORT: "0", GRPC_PORT: "0", LOG_LEVEL: "silent" });
        const line = await gateway.waitForLine((l) => DEV_KEY_LINE.test(l), "printing a development key");
        await gateway.stop();
        return DEV_KEY_LINE.exec(line)![1];
      }),
    );
    expect(keys[0]).not.toBe(keys[1]);
  });
});

describe("split: npm run start:core + npm run start:gateway", { timeout: TIMEOUT }, () => {
  const devKey = "sk-split-test-" + process.pid;
  let core: SpawnedEntry;
  let gateway: SpawnedEntry;
  let coreUrl: string;
  let gatewayUrl: string;

  beforeAll(async () => {
    // The core authenticates, so the development key is the core's.
    core = spawnEntry(CORE_ENTRY, { GRPC_PORT: "0", ROUTER_DEV_KEY: devKey });
    coreUrl = await core.waitForListening(/^core listening/);
    gateway = spawnEntry(GATEWAY_ENTRY, { PORT: "0", CORE_URL: coreUrl }, ["--split"]);
    gatewayUrl = await gateway.waitForListening(/^gateway listening/);
  }, TIMEOUT);

  it("logs the gateway's own port, and the gateway starts no core of its own", () => {
    expect(gatewayUrl).not.toBe(coreUrl);
    expect(gateway.stdoutLines.some((line) => logLine(line)?.msg?.startsWith("core listening"))).toBe(false);
  });

  it("does not print a development key from the gateway: only the core's key is valid", () => {
    expect(gateway.stdoutLines.some((line) => DEV_KEY_LINE.test(line))).toBe(false);
  });

  it("answers the openai SDK, JSON and stream, through the core over HTTP/2", async () => {
    await expectEchoAnswers(sdk(gatewayUrl, devKey));
  });

  it("refuses another key (the core authenticates)", async () => {
    await expectRejectedKey(sdk(gatewayUrl, "sk-not-the-dev-key"));
  });

  it("serves the catalogue from the core", async () => {
    const response = await fetch(`${gatewayUrl}/api/v1/modelProviderData?id=openai/gpt-4o`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: "openai/gpt-4o", pricing: { prompt: "0.0000025" } });
  });

  it("stops cleanly on SIGTERM, gateway first then core", async () => {
    expect(await gateway.stop()).toEqual({ code: 0, signal: null });
    expect(await core.stop()).toEqual({ code: 0, signal: null });
  });

  it("refuses to start the gateway alone without CORE_URL", async () => {
    const alone = spawnEntry(GATEWAY_ENTRY, { PORT: "0" }, ["--split"]);
    const exit = await alone.exited;
    expect(exit.code).not.toBe(0);
    expect(exit.code).not.toBeNull();
    expect(alone.stderr()).toMatch(/CORE_URL is required/);
    expect(alone.stdoutLines.some((line) => /listening/.test(logLine(line)?.msg ?? ""))).toBe(false);
  });
});

describe("an invalid ROUTER_CONFIG", { timeout: TIMEOUT }, () => {
  let dir: string;
  let file: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "router-config-"));
    file = join(dir, "router.yaml");
    writeFileSync(
      file,
      [
        "providers:",
        "  - id: simulator",
        "    label: Simulator",
        "    protocol: simulator",
        "  - id: cloud",
        "    label: Cloud",
        "    protocol: openai-compatible",
        "    api_key_env: CLOUD_KEY",
        "models:",
        "  - id: simulator/echo",
        "    name: Echo",
        "    created: 1700000000",
        "    creator: simulator",
        "    context_length: 8192",
        "    max_completion_tokens: 1024",
        "    input_modalities: [text]",
        "    output_modalities: [text]",
        "    supported_parameters: [max_tokens]",
        "    providers:",
        "      - provider: simulator",
        "        provider_model_id: echo",
        "        pricing: {prompt: \"1e-6\", completion: \"0\"}",
        "",
      ].join("\n"),
    );
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ["gateway/main.ts", GATEWAY_ENTRY, [] as string[]],
    ["core/main.ts", CORE_ENTRY, [] as string[]],
    ["gateway/main.ts --split", GATEWAY_ENTRY, ["--split"]],
  ])("makes %s exit 1 naming the file and each problem's path and reason", async (_name, script, args) => {
    const proc = spawnEntry(script, { PORT: "0", GRPC_PORT: "0", ROUTER_CONFIG: file, CORE_URL: "http://127.0.0.1:9" }, args);
    expect(await proc.exited).toEqual({ code: 1, signal: null });
    const stderr = proc.stderr();
    expect(stderr).toContain(file);
    expect(stderr).toMatch(/providers\.1\.base_url: required for protocol openai-compatible/);
    expect(stderr).toMatch(/models\.0\.providers\.0\.pricing\.prompt: must be a non-negative decimal string/);
    // Just the problems: no stack trace, nothing started.
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(proc.stdoutLines.some((line) => /listening/.test(logLine(line)?.msg ?? ""))).toBe(false);
  });

  it("makes the process exit 1 naming a file that does not exist", async () => {
    const missing = join(dir, "missing.yaml");
    const proc = spawnEntry(GATEWAY_ENTRY, { PORT: "0", GRPC_PORT: "0", ROUTER_CONFIG: missing });
    expect(await proc.exited).toEqual({ code: 1, signal: null });
    expect(proc.stderr()).toContain(missing);
  });
});
