// What both entry points do first: read the environment contract, load and
// validate the configuration, check the ports are free, and make sure the
// development key and the admin token exist. A problem at start is one line
// on stderr and exit 1, never a stack trace.
import { randomBytes } from "node:crypto";
import { pino, type Logger } from "pino";
import { ConfigError, DEFAULT_CONFIG_PATH, loadConfigFile } from "./config/load.ts";
import { StoreUnavailableError } from "./accounts/store-errors.ts";
import { createCore, type Core, type CoreDeps } from "./create-core.ts";
import { describeListenError, findListenProblem, type ListenTarget } from "./listen-check.ts";
import { DEFAULT_GRPC_PORT, portNumber } from "./port-number.ts";
import type { RouterConfig } from "./config/schema.ts";

export interface Startup {
  config: RouterConfig;
  env: Record<string, string | undefined>;
  host: string;
  port: number;
  grpcPort: number;
  logger: Logger;
  /** Variables of `env` this start made up (ROUTER_DEV_KEY when unset): printed once the store has them (announceDevKey). */
  generatedKeys: string[];
}

export const DEV_KEY_ENV = "ROUTER_DEV_KEY";
export const ADMIN_TOKEN_ENV = "ROUTER_ADMIN_TOKEN";

export interface StartupOptions {
  /**
   * Whether this process serves the core, so authenticates keys itself and
   * answers the account service: it then needs the development key and the
   * admin token. A split gateway does neither (the core does): a key or token
   * it made up and printed would not work.
   */
  devKey?: boolean;
}

export function startup(env: Record<string, string | undefined> = process.env, options: StartupOptions = {}): Startup {
  return withCredentials(readSettings(env), options);
}

/**
 * startup() for an entry point: the ports it will listen on are checked
 * before any credential is printed, so a port in use costs one line on stderr
 * and exit 1, not a key printed for a server that never runs.
 */
export async function startupToListen(
  env: Record<string, string | undefined>,
  options: StartupOptions & { listensOn: ListenTarget["variable"][] },
): Promise<Startup> {
  const settings = readSettings(env);
  const targets = options.listensOn.map((variable) => ({
    host: settings.host,
    port: variable === "PORT" ? settings.port : settings.grpcPort,
    variable,
  }));
  const problem = await findListenProblem(targets);
  if (problem) exitWithError(problem);
  return withCredentials(settings, options);
}

/** pino's levels, the values LOG_LEVEL may take. */
const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/** The environment and the configuration, checked; nothing printed. */
function readSettings(env: Record<string, string | undefined>): Startup {
  const level = env.LOG_LEVEL || "info";
  if (!LOG_LEVELS.includes(level)) exitWithError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}, got ${JSON.stringify(level)}`);
  if (env.REDIS_URL) {
    const protocol = URL.parse(env.REDIS_URL)?.protocol;
    if (protocol !== "redis:" && protocol !== "rediss:") {
      exitWithError(`REDIS_URL must be a redis:// or rediss:// URL (for example redis://127.0.0.1:6379), got ${JSON.stringify(env.REDIS_URL)}`);
    }
  }
  const logger = pino({ level });
  const configPath = env.ROUTER_CONFIG || DEFAULT_CONFIG_PATH;
  let config: RouterConfig;
  try {
    config = loadConfigFile(configPath);
  } catch (error) {
    if (error instanceof ConfigError) exitWithError(error.message);
    throw error;
  }
  return {
    config,
    env,
    host: env.HOST || "127.0.0.1",
    port: portFrom(env.PORT, 8080, "PORT"),
    grpcPort: portFrom(env.GRPC_PORT, DEFAULT_GRPC_PORT, "GRPC_PORT"),
    logger,
    generatedKeys: [],
  };
}

/**
 * Makes up the development key and the admin token the operator did not set.
 * The token is printed at once; the key once the account store has taken it
 * (announceDevKey), since a store shared with another instance keeps that
 * instance's key.
 */
function withCredentials(settings: Startup, options: StartupOptions): Startup {
  let env = settings.env;
  const generatedKeys: string[] = [];
  const servesCore = options.devKey ?? true;
  if (servesCore && devKeyIds(settings.config).length > 0 && !env[DEV_KEY_ENV]) {
    env = { ...env, [DEV_KEY_ENV]: "sk-rtr-dev-" + randomBytes(18).toString("base64url") };
    generatedKeys.push(DEV_KEY_ENV);
  }
  // A fresh token each start, like the development key: the account service
  // is usable out of the box, and never with a token anyone could know.
  if (servesCore && !env[ADMIN_TOKEN_ENV]) {
    env = { ...env, [ADMIN_TOKEN_ENV]: "rtr-admin-" + randomBytes(24).toString("base64url") };
    process.stdout.write(`Admin token for the account service (set ${ADMIN_TOKEN_ENV} to choose your own): ${env[ADMIN_TOKEN_ENV]}\n`);
  }
  return { ...settings, env, generatedKeys };
}

/** The configured key ids whose key is ROUTER_DEV_KEY. */
function devKeyIds(config: RouterConfig): string[] {
  return config.organizations.flatMap((org) => org.keys.filter((key) => key.env === DEV_KEY_ENV).map((key) => key.id));
}

/**
 * Prints the development key this start made up, once the account store has
 * it; or, where the store kept the key an id already had (another instance on
 * the same Redis, or an earlier start), says so rather than print a key that
 * would be refused.
 */
export function announceDevKey(settings: Pick<Startup, "config" | "env" | "generatedKeys">, keptKeyIds: readonly string[]): void {
  if (!settings.generatedKeys.includes(DEV_KEY_ENV)) return;
  const ids = devKeyIds(settings.config);
  const kept = ids.filter((id) => keptKeyIds.includes(id));
  if (kept.length < ids.length) {
    process.stdout.write(`Development API key (set ${DEV_KEY_ENV} to choose your own): ${settings.env[DEV_KEY_ENV]}\n`);
  }
  if (kept.length > 0) {
    const names = kept.join(", ");
    process.stdout.write(
      // Whoever set it may have printed it, or been given it in ROUTER_DEV_KEY (printing nothing): say only what is known.
      `Development API key not made: ${names} already has a key in the shared account store (REDIS_URL), set by another instance or an earlier start ` +
        `(the key it printed, or the ${DEV_KEY_ENV} it was given), and a generated key never replaces it. Use that key, or set ${DEV_KEY_ENV} to a key of your own to replace it.\n`,
    );
  }
}

/** A problem the operator must fix before starting: one line on stderr, exit 1, no stack trace. */
export function exitWithError(line: string): never {
  process.stderr.write(line + "\n");
  process.exit(1);
}

/** Runs a listen() (which may still lose a race for its port): a failure exits with one line. */
export async function listenOrExit<T>(target: ListenTarget, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (error) {
    exitWithError(describeListenError(error, target));
  }
}

function portFrom(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === "") return fallback;
  const port = portNumber(value);
  if (port === undefined) exitWithError(`${name} must be a port number, got ${JSON.stringify(value)}`);
  return port;
}

/** Runs `close` once on SIGINT/SIGTERM, then exits. */
export function closeOnSignals(close: () => Promise<void>) {
  let closing = false;
  const stop = () => {
    if (closing) return;
    closing = true;
    close().then(() => process.exit(0), () => process.exit(1));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

/** Builds the core, or exits with one clear line when its shared state (REDIS_URL) cannot be reached. */
export async function createCoreOrExit(deps: CoreDeps): Promise<Core> {
  try {
    return await createCore(deps);
  } catch (error) {
    if (!(error instanceof StoreUnavailableError)) throw error;
    // Either store may be the one that could not reach it: the message names neither.
    exitWithError(`Cannot start: Redis at REDIS_URL is unavailable (${error.message})`);
  }
}
