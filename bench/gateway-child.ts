// The gateway under test as a child of the benchmark: the temporary config the
// suites give it (one bench model, written to a temp dir) and its start
// (gateway/main.ts of a checkout with the Node options of its `npm start`, on
// a free port, readiness polled).
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { freePort, startChild, type Child } from "./children.ts";

/** A config model entry: `id`, `name` and its providers; the rest is the same for every bench model. */
export function benchModel(id: string, name: string, providers: Record<string, unknown>[]) {
  return {
    id,
    name,
    created: 1700000000,
    creator: "bench",
    context_length: 8192,
    max_completion_tokens: 1024,
    input_modalities: ["text"],
    output_modalities: ["text"],
    supported_parameters: ["max_tokens", "temperature"],
    providers,
  };
}

/** The upstream key the bench provider names (`api_key_env`), as the gateway child's environment gives it. */
export const BENCH_UPSTREAM_ENV: Record<string, string> = { BENCH_UPSTREAM_KEY: "sk-upstream-bench" };

/**
 * A config with one OpenAI-compatible upstream (its API at `{upstreamOrigin}/v1`),
 * one model routed to it, and one funded organisation holding ROUTER_DEV_KEY.
 */
export function oneUpstreamConfig(upstreamOrigin: string, modelId: string, modelName: string) {
  return {
    providers: [{ id: "bench", label: "Bench upstream", protocol: "openai-compatible", base_url: `${upstreamOrigin}/v1`, api_key_env: "BENCH_UPSTREAM_KEY" }],
    models: [benchModel(modelId, modelName, [{ provider: "bench", provider_model_id: "bench-model", pricing: { prompt: "0.000001", completion: "0.000002" } }])],
    // Credits: since accounts, a paid request needs a balance for its hold (402 without one).
    organizations: [{ id: "org_bench", name: "Bench", credits: "1000000", keys: [{ id: "key_bench", env: "ROUTER_DEV_KEY" }] }],
  };
}

/** Writes the config to `dir/router.json`; resolves to its path (the gateway's ROUTER_CONFIG). */
export async function writeGatewayConfig(dir: string, config: unknown): Promise<string> {
  const configPath = path.join(dir, "router.json");
  await writeFile(configPath, JSON.stringify(config, null, 2));
  return configPath;
}

export interface GatewayOptions {
  name: string;
  /** The checkout whose gateway/main.ts runs. */
  root: string;
  configPath: string;
  /** The dev key (ROUTER_DEV_KEY) the config's organisation holds. */
  devKey: string;
  logLevel: string;
  /** More environment (upstream keys, REDIS_URL, ...). */
  env?: Record<string, string>;
  execArgv?: string[];
}

/**
 * The Node options of the checkout's `npm start` (`node [options] gateway/main.ts`
 * in its package.json), so that the benchmark runs the gateway the way users
 * start it; none when the script has none (or an older checkout has no such script).
 */
export function startScriptNodeOptions(root: string): string[] {
  const start = (JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { scripts?: Record<string, string> }).scripts?.start ?? "";
  const words = start.trim().split(/\s+/);
  const main = words.indexOf("gateway/main.ts");
  if (words[0] !== "node" || main < 0) return [];
  return words.slice(1, main);
}

export async function startGateway(options: GatewayOptions): Promise<Child> {
  const port = await freePort();
  return startChild({
    name: options.name,
    module: path.join(options.root, "gateway", "main.ts"),
    env: {
      HOST: "127.0.0.1",
      PORT: String(port),
      GRPC_PORT: "0",
      ROUTER_CONFIG: options.configPath,
      ROUTER_DEV_KEY: options.devKey,
      LOG_LEVEL: options.logLevel,
      ...options.env,
    },
    execArgv: [...startScriptNodeOptions(options.root), ...(options.execArgv ?? [])],
    ready: { poll: `http://127.0.0.1:${port}/api/v1/models`, url: `http://127.0.0.1:${port}` },
  });
}
