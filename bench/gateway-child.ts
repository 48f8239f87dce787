// The gateway under test as a child of the benchmark: the temporary config the
// suites give it (one bench model, written to a temp dir) and its start
// (gateway/main.ts of a checkout, on a free port, readiness polled).
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
    execArgv: options.execArgv,
    ready: { poll: `http://127.0.0.1:${port}/api/v1/models`, url: `http://127.0.0.1:${port}` },
  });
}
