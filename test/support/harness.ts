// Starts a gateway for tests on ephemeral ports: in-process (the default
// deployment) or split (core server + gateway reaching it over Connect/HTTP2).
import type { ResponsesSockets } from "../../gateway/formats/responses/socket.ts";
import type { Server } from "node:http";
import { afterAll, beforeAll } from "vitest";
import type { AddressInfo } from "node:net";
import { parseConfig } from "../../core/config/load.ts";
import type { RouterConfig } from "../../core/config/schema.ts";
import { createCore, type Core, type CoreDeps } from "../../core/create-core.ts";
import { createCoreServer, type CoreServer } from "../../core/server.ts";
import { createApp } from "../../gateway/app.ts";
import { createInProcessCoreClient, createRemoteCoreClient } from "../../gateway/core-client.ts";
import { listenGateway } from "../../gateway/http-server.ts";
import { startFakeUpstream, type FakeUpstream } from "./fake-openai-upstream.ts";

export const TEST_KEY = "sk-test-key";
export const DISABLED_KEY = "sk-disabled-key";

export interface Gateway {
  url: string;
  /** Base URL for the openai SDK. */
  apiUrl: string;
  core: Core;
  coreServer: CoreServer | undefined;
  /** The Responses WebSocket mode's sockets (their counts). */
  sockets: ResponsesSockets;
  close(): Promise<void>;
}

/**
 * A configuration with the simulator, two OpenAI-compatible providers pointing
 * at the fake upstream (one cheap, one dear, to test ordering), and test keys.
 */
export function testConfig(upstreamUrl: string): RouterConfig {
  const route = (provider: string, providerModelId: string, prompt: string, extra: Record<string, unknown> = {}) => ({
    provider,
    provider_model_id: providerModelId,
    pricing: { prompt, completion: "0.000002", input_cache_read: "0.0000001" },
    ...extra,
  });
  const model = (id: string, routes: ReturnType<typeof route>[], supportedParameters = ALL_PARAMETERS, extra: Record<string, unknown> = {}) => ({
    id,
    name: id,
    created: 1700000000,
    creator: id.split("/")[0],
    context_length: 128000,
    max_completion_tokens: 4096,
    input_modalities: ["text", "image"],
    output_modalities: ["text"],
    supported_parameters: supportedParameters,
    providers: routes,
    ...extra,
  });
  return parseConfig(
    JSON.stringify({
      providers: [
        { id: "simulator", label: "Simulator", protocol: "simulator" },
        { id: "cheap", label: "Cheap Cloud", protocol: "openai-compatible", base_url: upstreamUrl, api_key_env: "CHEAP_KEY", timeout_ms: 5000 },
        { id: "dear", label: "Dear Cloud", protocol: "openai-compatible", base_url: upstreamUrl, api_key_env: "DEAR_KEY", timeout_ms: 5000 },
        { id: "nokey", label: "No Key Cloud", protocol: "openai-compatible", base_url: upstreamUrl, api_key_env: "NOKEY_KEY" },
        // A local server (vLLM, Ollama) that needs no key names no key variable.
        { id: "local", label: "Local", protocol: "openai-compatible", base_url: upstreamUrl },
      ],
      models: [
        model("simulator/echo", [route("simulator", "echo", "0.0000001")]),
        model("simulator/slow", [route("simulator", "slow", "0.0000001")]),
        model("simulator/cut-mid-stream", [route("simulator", "cut-mid-stream", "0.0000001")]),
        model("simulator/tool-call", [route("simulator", "tool-call", "0.0000001")]),
        model("simulator/reasoning", [route("simulator", "reasoning", "0.0000001")]),
        model("test/ok", [route("cheap", "ok", "0.000001"), route("dear", "ok-dear", "0.000003")]),
        model("test/fail-503", [route("cheap", "fail-503", "0.000001"), route("dear", "ok-dear", "0.000003")]),
        model("test/fail-429", [route("cheap", "fail-429", "0.000001"), route("dear", "ok-dear", "0.000003")]),
        model("test/reset", [route("cheap", "reset", "0.000001"), route("dear", "ok-dear", "0.000003")]),
        model("test/cut", [route("cheap", "cut-after-first", "0.000001"), route("dear", "ok-dear", "0.000003")]),
        model("test/bad-request", [route("cheap", "fail-400", "0.000001"), route("dear", "ok-dear", "0.000003")]),
        model("test/all-429", [route("cheap", "fail-429", "0.000001"), route("dear", "fail-429", "0.000003")]),
        model("test/hang", [route("cheap", "hang", "0.000001")]),
        model("test/tool", [route("cheap", "tool", "0.000001")]),
        model("test/cite", [route("cheap", "cite", "0.000001")]),
        model("test/cite-urls", [route("cheap", "cite-urls", "0.000001")]),
        model("test/unkeyed", [route("nokey", "ok", "0.000001")]),
        model("test/fail-401", [route("cheap", "fail-401", "0.000001"), route("dear", "ok-dear", "0.000003")]),
        model("test/html", [route("cheap", "html", "0.000001"), route("dear", "ok-dear", "0.000003")]),
        model("test/end-early", [route("cheap", "end-early", "0.000001"), route("dear", "ok-dear", "0.000003")]),
        model("test/local", [route("local", "ok-local", "0.000001")]),
        // Suffix and reasoning cases: a free-tier opt-in, an effort map, no reasoning at all.
        model("test/free", [route("cheap", "ok", "0.000001", { free: { enabled: true, daily_quota: 10 } })]),
        model("test/thinker", [route("cheap", "ok", "0.000001", { reasoning_effort_map: { low: "low", medium: "medium", high: "high" } })]),
        model("test/plain", [route("cheap", "ok", "0.000001")], ["max_tokens", "temperature"]),
        model("test/extensions", [route("cheap", "ok", "0.000001")], [...ALL_PARAMETERS, "top_k", "repetition_penalty"]),
        // Capability cases: text input only; a cheap route with a small context before a roomier dear one.
        model("test/text-only", [route("cheap", "ok", "0.000001")], ALL_PARAMETERS, { input_modalities: ["text"] }),
        model("test/limited", [route("cheap", "ok", "0.000001", { context_length: 1000 }), route("dear", "ok-dear", "0.000003")]),
      ],
      // The fake upstream reports cached tokens on every answer: stickiness would make each test's
      // routing depend on the ones before it. Its own test turns it on (prompt-cache-stickiness.test.ts).
      routing: { cache_stickiness_seconds: 0 },
      organizations: [
        {
          id: "org_test",
          name: "Test",
          credits: "1000",
          keys: [
            { id: "key_test", env: "TEST_API_KEY" },
            { id: "key_disabled", env: "DISABLED_API_KEY", disabled: true },
          ],
        },
      ],
    }),
  );
}

const ALL_PARAMETERS = [
  "max_tokens", "temperature", "top_p", "stop", "seed", "frequency_penalty", "presence_penalty",
  "tools", "tool_choice", "response_format", "reasoning",
];

export const TEST_ENV = { CHEAP_KEY: "cheap-secret", DEAR_KEY: "dear-secret", TEST_API_KEY: TEST_KEY, DISABLED_API_KEY: DISABLED_KEY };

export interface GatewayOptions {
  split?: boolean;
  /** Core dependencies to swap: the clock, router/free's draw, the account stores, the conversation store, the asset store. */
  core?: Pick<CoreDeps, "now" | "random" | "stores" | "conversationStore" | "assetStore" | "taskStore">;
  /** Extra environment (REDIS_URL, ROUTER_ADMIN_TOKEN). */
  env?: Record<string, string>;
}

export async function startGateway(config: RouterConfig, options: GatewayOptions = {}): Promise<Gateway> {
  const core = await createCore({ config, env: { ...TEST_ENV, ...options.env }, ...options.core });
  const coreServer = options.split ? await createCoreServer(core, { host: "127.0.0.1", port: 0 }) : undefined;
  const client = coreServer ? createRemoteCoreClient(coreServer.url) : createInProcessCoreClient(core);
  const app = createApp({ core: client, websocket: config.responses_websocket });
  const server: Server = listenGateway(app, 0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    apiUrl: `${url}/api/v1`,
    core,
    coreServer,
    sockets: app.sockets,
    async close() {
      app.sockets.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await coreServer?.close();
      await core.close();
    },
  };
}

/**
 * A fake upstream and an in-process gateway routed to it, started before the
 * calling file's (or describe block's) tests and closed after them. The fields
 * are filled in by beforeAll.
 */
export function useGatewayWithUpstream(configFor: (upstreamUrl: string) => RouterConfig = testConfig) {
  const stack = {} as { upstream: FakeUpstream; gateway: Gateway };
  beforeAll(async () => {
    stack.upstream = await startFakeUpstream();
    stack.gateway = await startGateway(configFor(stack.upstream.url));
  });
  afterAll(async () => {
    await stack.gateway?.close();
    await stack.upstream?.close();
  });
  return stack;
}
