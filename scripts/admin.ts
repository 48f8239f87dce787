// The operators' command line for the account service (keys, credits, usage).
//
//   npm run -s admin -- <command> [flags]      (--help lists the commands)
//
// It is a plain Connect client of the core at CORE_URL (default: this machine's
// GRPC_PORT), authenticated with ROUTER_ADMIN_TOKEN: everything it does, any
// gRPC or Connect client can do.
import { parseArgs } from "node:util";
import { toJson, type DescMessage, type JsonValue, type MessageShape } from "@bufbuild/protobuf";
import { ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { AccountService } from "../gen/router/v1/accounts_pb.js";
import { errorDetailOf } from "../core/errors.ts";
import { coreUrlProblem } from "../gateway/core-client.ts";
import { httpUrl } from "../core/host-port.ts";
import { DEFAULT_GRPC_PORT, portNumber } from "../core/port-number.ts";

const USAGE = `Usage: npm run -s admin -- <command> [flags]

Manages API keys, credits and usage through the core's AccountService at
CORE_URL (default http://127.0.0.1:<GRPC_PORT>, GRPC_PORT default ${DEFAULT_GRPC_PORT}),
authenticated with ROUTER_ADMIN_TOKEN. Money is decimal USD (1 credit = 1 USD).

Commands:
  list-orgs                                (every organisation: id, name, balance, limits)
  create-key   --org ORG [--name NAME] [--rpm N] [--tpm N] [--model ID ...]
               A new key; its secret (sk-rtr-...) is shown this once only.
  list-keys    --org ORG
  disable-key  --key KEY_ID
  enable-key   --key KEY_ID
  top-up       --org ORG --amount USD
  balance      --org ORG
  usage        --org ORG [--limit N]      (latest records, default 50, max 1000)

An organisation that does not exist is an error for list-keys, balance and
usage; top-up and create-key make it. Results are printed as JSON on stdout;
errors go to stderr with exit code 1.
`;

type Flags = {
  org?: string;
  name?: string;
  rpm?: string;
  tpm?: string;
  model?: string[];
  key?: string;
  amount?: string;
  limit?: string;
};

interface Command {
  /** Flags the command takes; `required` ones must be given. */
  flags: (keyof Flags)[];
  required: (keyof Flags)[];
  /** Calls the service; answers the response as JSON. */
  run(client: Client<typeof AccountService>, flags: Flags): Promise<JsonValue>;
  /** Said on stderr after the result. */
  note?: string;
}

const methods = AccountService.method;

/** alwaysEmitImplicit: a false `disabled` or a "0" count is printed, not left out. */
const json = <S extends DescMessage>(schema: S, message: MessageShape<S>) => toJson(schema, message, { alwaysEmitImplicit: true });

const COMMANDS: Record<string, Command> = {
  "list-orgs": {
    flags: [],
    required: [],
    run: async (client) => json(methods.listOrganizations.output, await client.listOrganizations({})),
  },
  "create-key": {
    flags: ["org", "name", "rpm", "tpm", "model"],
    required: ["org"],
    run: async (client, flags) =>
      json(
        methods.createKey.output,
        await client.createKey({
          organizationId: flags.org,
          name: flags.name ?? "",
          rpm: wholeNumber("rpm", flags.rpm),
          tpm: wholeNumber("tpm", flags.tpm),
          allowedModels: flags.model ?? [],
        }),
      ),
    note: "Store apiKey now: it is not shown again (the router keeps only its SHA-256 digest).",
  },
  "list-keys": {
    flags: ["org"],
    required: ["org"],
    run: async (client, flags) => json(methods.listKeys.output, await client.listKeys({ organizationId: flags.org })),
  },
  "disable-key": {
    flags: ["key"],
    required: ["key"],
    run: async (client, flags) => json(methods.disableKey.output, await client.disableKey({ keyId: flags.key })),
  },
  "enable-key": {
    flags: ["key"],
    required: ["key"],
    run: async (client, flags) => json(methods.enableKey.output, await client.enableKey({ keyId: flags.key })),
  },
  "top-up": {
    flags: ["org", "amount"],
    required: ["org", "amount"],
    run: async (client, flags) => json(methods.topUp.output, await client.topUp({ organizationId: flags.org, amount: flags.amount })),
  },
  balance: {
    flags: ["org"],
    required: ["org"],
    run: async (client, flags) => json(methods.getBalance.output, await client.getBalance({ organizationId: flags.org })),
  },
  usage: {
    flags: ["org", "limit"],
    required: ["org"],
    run: async (client, flags) =>
      json(methods.getUsage.output, await client.getUsage({ organizationId: flags.org, limit: wholeNumber("limit", flags.limit) ?? 0 })),
  },
};

/** A mistake on the command line: reported with a pointer to --help. */
class UsageError extends Error {}

/** A problem with the environment (no token, a CORE_URL that is not a URL): reported as it is. */
class SetupError extends Error {}

/** Only the shape is checked here; the service judges the value (a positive rpm, a limit in range). */
function wholeNumber(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,9}$/.test(value)) throw new UsageError(`--${flag} must be a whole number, got ${JSON.stringify(value)}`);
  return Number(value);
}

async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      org: { type: "string" },
      name: { type: "string" },
      rpm: { type: "string" },
      tpm: { type: "string" },
      model: { type: "string", multiple: true },
      key: { type: "string" },
      amount: { type: "string" },
      limit: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const [name, ...extra] = positionals;
  if (!name) throw new UsageError("no command given");
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!command) throw new UsageError(`unknown command ${JSON.stringify(name)}`);
  if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  const { help: _help, ...flags } = values;
  // A flag the command does not use is refused rather than silently ignored.
  for (const flag of Object.keys(flags) as (keyof Flags)[]) {
    if (!command.flags.includes(flag)) throw new UsageError(`${name} does not take --${flag}`);
  }
  for (const flag of command.required) {
    if (flags[flag] === undefined) throw new UsageError(`${name} needs --${flag}`);
  }

  const token = env.ROUTER_ADMIN_TOKEN;
  if (!token) {
    throw new SetupError("ROUTER_ADMIN_TOKEN is not set: use the token the core printed when it started, or the one you gave it.");
  }
  const coreUrl = coreUrlOf(env);
  const transport = createConnectTransport({
    baseUrl: coreUrl,
    httpVersion: "2",
    defaultTimeoutMs: 30_000,
    interceptors: [
      (next) => (request) => {
        request.header.set("authorization", `Bearer ${token}`);
        return next(request);
      },
    ],
  });
  let result: JsonValue;
  try {
    result = await command.run(createClient(AccountService, transport), flags);
  } catch (error) {
    // Without our ErrorDetail the core did not answer: refused, reset, not the core at that address.
    if (error instanceof ConnectError && !errorDetailOf(error)) {
      throw new SetupError(`cannot reach the core at ${coreUrl}: ${error.rawMessage}. Is the core running (npm start or npm run start:core), ${whatToCheck(env, coreUrl)}`);
    }
    throw error;
  }
  process.stdout.write(JSON.stringify(result, null, 2) + "\n");
  if (command.note) process.stderr.write(command.note + "\n");
  return 0;
}

/** CORE_URL, else the core of `npm start` on this machine: the port it listens on is GRPC_PORT there too. */
function coreUrlOf(env: NodeJS.ProcessEnv): string {
  if (env.CORE_URL) {
    const problem = coreUrlProblem(env.CORE_URL);
    if (problem) throw new SetupError(problem);
    return env.CORE_URL;
  }
  if (!env.GRPC_PORT) return `http://127.0.0.1:${DEFAULT_GRPC_PORT}`;
  // 0 lets a server pick a port, but names none to connect to.
  const port = portNumber(env.GRPC_PORT);
  if (!port) throw new SetupError(`GRPC_PORT must be the core's port number (1 to 65535), got ${JSON.stringify(env.GRPC_PORT)}; or set CORE_URL`);
  return `http://127.0.0.1:${port}`;
}

/**
 * The setting to check when the core does not answer. Without CORE_URL the CLI tries 127.0.0.1,
 * where a core started with another HOST (`::1`, a LAN address) does not listen.
 */
function whatToCheck(env: NodeJS.ProcessEnv, coreUrl: string): string {
  if (env.CORE_URL) return "and is CORE_URL right?";
  const host = env.HOST && !["127.0.0.1", "localhost", "0.0.0.0", "::"].includes(env.HOST) ? env.HOST : undefined;
  const elsewhere = host
    ? `HOST is ${JSON.stringify(host)}: a core listening there is reached with CORE_URL=${httpUrl(host, new URL(coreUrl).port)}`
    : "a core not on 127.0.0.1 is reached with CORE_URL (for example http://[::1]:50051)";
  return `and is GRPC_PORT right? Without CORE_URL the core is looked for on 127.0.0.1; ${elsewhere}.`;
}

/** What to do next, for a refusal that has an obvious next step. */
const HINTS: Record<string, string> = {
  organization_not_found: "list-orgs lists the organisations there are",
};

function describeError(error: unknown): string {
  if (error instanceof UsageError) return `${error.message} (see --help)`;
  if (error instanceof ConnectError) {
    const detail = errorDetailOf(error);
    const extra = [detail?.reason && `reason: ${detail.reason}`, detail?.param && `param: ${detail.param}`].filter(Boolean);
    const hint = detail?.reason && Object.hasOwn(HINTS, detail.reason) ? `; ${HINTS[detail.reason]}` : "";
    return error.message + (extra.length ? ` (${extra.join(", ")})` : "") + hint;
  }
  // parseArgs refuses unknown flags and missing values with a TypeError carrying a code.
  if (error instanceof TypeError && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS")) {
    // Node's own words for an unknown flag advise a `--` that no command takes, and leave a quote unclosed.
    const unknown = error.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" ? /^Unknown option '([^']+)'/.exec(error.message)?.[1] : undefined;
    return `${unknown ? `unknown flag ${unknown}` : error.message} (see --help)`;
  }
  return error instanceof Error ? error.message : String(error);
}

try {
  process.exitCode = await main(process.argv.slice(2), process.env);
} catch (error) {
  process.stderr.write(`error: ${describeError(error)}\n`);
  process.exitCode = 1;
}
