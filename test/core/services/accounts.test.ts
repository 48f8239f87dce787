// The account service as operators reach it: through the core's HTTP/2 server
// (Connect, gRPC and reflection on one port) over an in-memory account store,
// from a Connect client, a grpc-js client, `buf curl` and the admin CLI.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { create, toJsonString } from "@bufbuild/protobuf";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { createMemoryAccountStores } from "../../../core/accounts/memory-store.ts";
import { StoreUnavailableError } from "../../../core/accounts/store-errors.ts";
import type { AccountStores, NewKey, UsageRecord } from "../../../core/accounts/store.ts";
import { sha256Hex } from "../../../core/auth/keys.ts";
import type { Core } from "../../../core/create-core.ts";
import { errorDetailOf } from "../../../core/errors.ts";
import { createCoreServer, type CoreServer } from "../../../core/server.ts";
import { createAccountService } from "../../../core/services/accounts.ts";
import { startup } from "../../../core/startup.ts";
import {
  AccountService,
  GetBalanceRequestSchema,
  GetBalanceResponseSchema,
  ListKeysResponseSchema,
  TopUpRequestSchema,
  TopUpResponseSchema,
  type GetBalanceResponse,
  type TopUpResponse,
} from "../../../gen/router/v1/accounts_pb.js";
import { bufCurl, grpcMethod } from "../../support/grpc-js.ts";
import { freePort } from "../../support/redis-server.ts";

const adminScript = fileURLToPath(new URL("../../../scripts/admin.ts", import.meta.url));
const run = promisify(execFile);

const ADMIN_TOKEN = "rtr-admin-test-token";
/** The catalogue the service checks allow-lists against. */
const MODEL_IDS = ["simulator/echo", "test/ok", "openai/gpt-4o", "openai/gpt-4o-mini"];
const START = Date.UTC(2026, 10, 2, 10, 0, 0);

/** Store calls as the service made them, to check what it hands the store. */
interface Recorded {
  createdKeys: NewKey[];
}

/** The memory stores, recording the keys the service creates. */
function recordingStores(): { stores: AccountStores; recorded: Recorded } {
  const stores = createMemoryAccountStores();
  const recorded: Recorded = { createdKeys: [] };
  const create = stores.keys.create;
  stores.keys.create = (key) => {
    recorded.createdKeys.push(structuredClone(key));
    return create(key);
  };
  return { stores, recorded };
}

/**
 * The core server with only the account service behind it: the inference,
 * catalogue, selection, conversation and task services are left unimplemented, they are not
 * this test's business.
 */
async function serve(accounts: ReturnType<typeof createAccountService>): Promise<CoreServer> {
  const core = { services: { inference: {}, catalogue: {}, selection: {}, accounts, conversations: {}, tasks: {} } } as unknown as Core;
  return createCoreServer(core, { host: "127.0.0.1", port: 0 });
}

let clock = START;
const { stores, recorded } = recordingStores();
let server: CoreServer;
let client: Client<typeof AccountService>;

beforeAll(async () => {
  server = await serve(createAccountService({ stores, adminToken: ADMIN_TOKEN, now: () => new Date(clock), modelIds: MODEL_IDS }));
  client = createClient(AccountService, createConnectTransport({ baseUrl: server.url, httpVersion: "2" }));
});

afterAll(async () => {
  await server?.close();
});

const admin = { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } };

/** The ConnectError a call fails with. */
async function failure(call: Promise<unknown>): Promise<ConnectError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof ConnectError)) throw new Error(`expected a ConnectError, got ${String(error)}`);
  return error;
}

async function expectFailure(call: Promise<unknown>, code: Code, reason: string, param = "") {
  const error = await failure(call);
  expect({ code: Code[error.code], reason: errorDetailOf(error)?.reason, param: errorDetailOf(error)?.param }).toEqual({
    code: Code[code],
    reason,
    param,
  });
}

describe("the admin token", () => {
  // Each RPC with a valid request, so only the token can make it fail.
  const calls: [string, (c: Client<typeof AccountService>, options?: { headers: Record<string, string> }) => Promise<unknown>][] = [
    ["CreateKey", (c, o) => c.createKey({ organizationId: "org-token" }, o)],
    ["ListKeys", (c, o) => c.listKeys({ organizationId: "org-token" }, o)],
    ["DisableKey", (c, o) => c.disableKey({ keyId: "key_none" }, o)],
    ["EnableKey", (c, o) => c.enableKey({ keyId: "key_none" }, o)],
    ["TopUp", (c, o) => c.topUp({ organizationId: "org-token", amount: "1" }, o)],
    ["GetBalance", (c, o) => c.getBalance({ organizationId: "org-token" }, o)],
    ["GetUsage", (c, o) => c.getUsage({ organizationId: "org-token" }, o)],
    ["ListOrganizations", (c, o) => c.listOrganizations({}, o)],
  ];

  it.each(calls)("%s without a token is UNAUTHENTICATED invalid_admin_token", async (_name, call) => {
    await expectFailure(call(client), Code.Unauthenticated, "invalid_admin_token");
  });

  it.each([
    ["a wrong token", `Bearer ${ADMIN_TOKEN}x`],
    ["a prefix of the token", `Bearer ${ADMIN_TOKEN.slice(0, -1)}`],
    ["another scheme", `Basic ${ADMIN_TOKEN}`],
    ["no token after Bearer", "Bearer "],
  ])("%s is UNAUTHENTICATED invalid_admin_token", async (_name, authorization) => {
    await expectFailure(client.getBalance({ organizationId: "org-token" }, { headers: { authorization } }), Code.Unauthenticated, "invalid_admin_token");
  });

  it("changes nothing when refused", async () => {
    await failure(calls[0][1](client, { headers: { authorization: "Bearer wrong" } }));
    await failure(calls[4][1](client, { headers: { authorization: "Bearer wrong" } }));
    expect(await stores.keys.list("org-token")).toEqual([]);
    expect(await stores.credits.balance("org-token")).toBe(0n);
  });

  it("accepts the scheme in any case", async () => {
    await client.topUp({ organizationId: "org-scheme", amount: "1" }, { headers: { authorization: `bearer ${ADMIN_TOKEN}` } });
    const balance = await client.getBalance({ organizationId: "org-scheme" }, { headers: { authorization: `BEARER ${ADMIN_TOKEN}` } });
    expect(balance.balance).toBe("1");
  });

  describe("when the core has no admin token", () => {
    let disabled: CoreServer;
    let disabledClient: Client<typeof AccountService>;

    beforeAll(async () => {
      disabled = await serve(createAccountService({ stores, adminToken: undefined, now: () => new Date(clock), modelIds: MODEL_IDS }));
      disabledClient = createClient(AccountService, createConnectTransport({ baseUrl: disabled.url, httpVersion: "2" }));
    });

    afterAll(async () => {
      await disabled?.close();
    });

    it.each(calls)("%s is PERMISSION_DENIED admin_disabled, whatever the token", async (_name, call) => {
      await expectFailure(call(disabledClient, admin), Code.PermissionDenied, "admin_disabled");
      await expectFailure(call(disabledClient), Code.PermissionDenied, "admin_disabled");
    });
  });
});

describe("keys", () => {
  it("CreateKey answers the key once and hands the store only its SHA-256 digest", async () => {
    clock = START + 1_000;
    const { key, apiKey } = await client.createKey(
      { organizationId: "acme", name: "ci", rpm: 60, tpm: 100_000, allowedModels: ["simulator/echo", "test/ok"] },
      admin,
    );
    expect(apiKey).toMatch(/^sk-rtr-[A-Za-z0-9_-]{43}$/);
    expect(key?.keyId).toMatch(/^key_[0-9a-f]{32}$/);
    expect(key).toMatchObject({
      organizationId: "acme",
      name: "ci",
      disabled: false,
      rpm: 60,
      tpm: 100_000,
      allowedModels: ["simulator/echo", "test/ok"],
    });
    expect(timestampMs(key!.createdAt!)).toBe(START + 1_000);

    const stored = await stores.keys.findByDigest(sha256Hex(apiKey));
    expect(stored).toEqual({
      keyId: key!.keyId,
      organizationId: "acme",
      name: "ci",
      disabled: false,
      rpm: 60,
      tpm: 100_000,
      allowedModels: ["simulator/echo", "test/ok"],
      createdAt: START + 1_000,
    });
    const handed = recorded.createdKeys.find((k) => k.keyId === key!.keyId)!;
    expect(handed.digest).toBe(sha256Hex(apiKey));
    expect(JSON.stringify(handed)).not.toContain(apiKey.slice("sk-rtr-".length));
  });

  it("CreateKey makes a different key and id each time, and leaves limits unset when not given", async () => {
    const first = await client.createKey({ organizationId: "acme-twice" }, admin);
    const second = await client.createKey({ organizationId: "acme-twice" }, admin);
    expect(first.apiKey).not.toBe(second.apiKey);
    expect(first.key?.keyId).not.toBe(second.key?.keyId);
    expect(first.key?.rpm).toBeUndefined();
    expect(first.key?.tpm).toBeUndefined();
    expect(first.key?.allowedModels).toEqual([]);
    expect((await stores.keys.findByDigest(sha256Hex(first.apiKey)))?.rpm).toBeUndefined();
  });

  it.each([
    ["an empty organisation", { organizationId: "" }, "organization_id"],
    ["a blank organisation", { organizationId: "  " }, "organization_id"],
    ["rpm 0", { organizationId: "acme", rpm: 0 }, "rpm"],
    ["a negative tpm", { organizationId: "acme", tpm: -5 }, "tpm"],
    ["an empty model id", { organizationId: "acme", allowedModels: ["simulator/echo", ""] }, "allowed_models"],
  ])("CreateKey refuses %s with INVALID_ARGUMENT and the param", async (_name, request, param) => {
    const before = recorded.createdKeys.length;
    await expectFailure(client.createKey(request, admin), Code.InvalidArgument, "invalid_parameter", param);
    expect(recorded.createdKeys.length).toBe(before);
  });

  it.each([
    ["a typo", "openai/gpt4o", '"openai/gpt4o" is not a model of the catalogue; did you mean "openai/gpt-4o"?'],
    ["another typo", "simulator/ech0", '"simulator/ech0" is not a model of the catalogue; did you mean "simulator/echo"?'],
    ["a bare name", "gpt-4o-mini", '"gpt-4o-mini" is not a model of the catalogue; did you mean "openai/gpt-4o-mini"?'],
    ["an unknown model", "vendor/unheard-of", '"vendor/unheard-of" is not a model of the catalogue'],
    ["a suffix", "simulator/echo:free", '"simulator/echo:free" carries a suffix: the allow-list takes catalogue ids without one ("simulator/echo" allows "simulator/echo:free" too)'],
  ])("CreateKey refuses %s in allowed_models with INVALID_ARGUMENT naming the id, and makes no key", async (_name, id, problem) => {
    const before = recorded.createdKeys.length;
    const error = await failure(client.createKey({ organizationId: "acme", allowedModels: ["simulator/echo", id] }, admin));
    expect({ code: Code[error.code], reason: errorDetailOf(error)?.reason, param: errorDetailOf(error)?.param }).toEqual({
      code: Code[Code.InvalidArgument],
      reason: "invalid_parameter",
      param: "allowed_models",
    });
    expect(error.rawMessage).toBe(`allowed_models: ${problem}${problem.endsWith("?") ? "" : "."}`);
    expect(recorded.createdKeys.length).toBe(before);
  });

  it("ListKeys lists the organisation's keys, oldest first, without the keys themselves", async () => {
    clock = START + 20_000;
    const older = await client.createKey({ organizationId: "listed", name: "older" }, admin);
    clock = START + 10_000;
    const newer = await client.createKey({ organizationId: "listed", name: "made earlier" }, admin);
    await client.createKey({ organizationId: "someone-else" }, admin);

    const response = await client.listKeys({ organizationId: "listed" }, admin);
    expect(response.keys.map((k) => [k.keyId, k.name])).toEqual([
      [newer.key!.keyId, "made earlier"],
      [older.key!.keyId, "older"],
    ]);
    const json = toJsonString(ListKeysResponseSchema, response);
    expect(json).not.toContain(older.apiKey);
    expect(json).not.toContain(newer.apiKey);
    expect(json).not.toContain(sha256Hex(older.apiKey));
    await expectFailure(client.listKeys({ organizationId: "nobody" }, admin), Code.NotFound, "organization_not_found", "organization_id");
  });

  it("DisableKey disables the key in the store; EnableKey enables it again", async () => {
    const { key, apiKey } = await client.createKey({ organizationId: "acme", name: "to disable" }, admin);
    const disabled = await client.disableKey({ keyId: key!.keyId }, admin);
    expect(disabled.key).toMatchObject({ keyId: key!.keyId, name: "to disable", disabled: true });
    expect((await stores.keys.findByDigest(sha256Hex(apiKey)))?.disabled).toBe(true);

    const enabled = await client.enableKey({ keyId: key!.keyId }, admin);
    expect(enabled.key?.disabled).toBe(false);
    expect((await stores.keys.findByDigest(sha256Hex(apiKey)))?.disabled).toBe(false);
  });

  it("DisableKey and EnableKey of an unknown key are NOT_FOUND key_not_found; no id is INVALID_ARGUMENT", async () => {
    await expectFailure(client.disableKey({ keyId: "key_nope" }, admin), Code.NotFound, "key_not_found", "key_id");
    await expectFailure(client.enableKey({ keyId: "key_nope" }, admin), Code.NotFound, "key_not_found", "key_id");
    await expectFailure(client.disableKey({ keyId: "" }, admin), Code.InvalidArgument, "invalid_parameter", "key_id");
  });
});

describe("credits", () => {
  it("TopUp adds exact decimal amounts: 0.1 + 0.2 is 0.3", async () => {
    expect((await client.topUp({ organizationId: "exact", amount: "0.1" }, admin)).balance).toBe("0.1");
    expect((await client.topUp({ organizationId: "exact", amount: "0.2" }, admin)).balance).toBe("0.3");
    expect((await client.getBalance({ organizationId: "exact" }, admin)).balance).toBe("0.3");
    expect(await stores.credits.balance("exact")).toBe(300_000_000n);
  });

  it("takes amounts down to the nano-dollar and large whole amounts", async () => {
    expect((await client.topUp({ organizationId: "fine", amount: "0.000000001" }, admin)).balance).toBe("0.000000001");
    expect((await client.topUp({ organizationId: "fine", amount: "1000000000" }, admin)).balance).toBe("1000000000.000000001");
  });

  it("GetBalance of a configured organisation with nothing is 0", async () => {
    await stores.seed([{ organizationId: "empty-org", name: "Empty", initialCreditsNanos: 0n, keys: [] }]);
    expect((await client.getBalance({ organizationId: "empty-org" }, admin)).balance).toBe("0");
  });

  it("GetBalance shows what admitted requests hold as spent", async () => {
    const { apiKey } = await client.createKey({ organizationId: "held" }, admin);
    await client.topUp({ organizationId: "held", amount: "2" }, admin);
    const admission = await stores.admission.admit({
      requestId: "rtr_held",
      keyDigest: sha256Hex(apiKey),
      modelIds: ["simulator/echo"],
      charge: { kind: "credits", holdNanos: 500_000_000n },
      now: START,
    });
    expect(admission.admitted).toBe(true);
    expect((await client.getBalance({ organizationId: "held" }, admin)).balance).toBe("1.5");
  });

  it.each([
    ["negative", "-1"],
    ["zero", "0"],
    ["zero with decimals", "0.000"],
    ["not a number", "abc"],
    ["10 decimal places", "0.0000000001"],
    ["empty", ""],
    ["exponent notation", "1e3"],
    ["surrounded by spaces", " 5 "],
    ["more than 1e9 USD", "1000000000.000000001"],
  ])("TopUp refuses a %s amount with INVALID_ARGUMENT param amount, and changes nothing", async (name, amount) => {
    const organizationId = `refused ${name}`;
    await client.topUp({ organizationId, amount: "1" }, admin);
    await expectFailure(client.topUp({ organizationId, amount }, admin), Code.InvalidArgument, "invalid_parameter", "amount");
    expect((await client.getBalance({ organizationId }, admin)).balance).toBe("1");
  });

  it("TopUp and GetBalance need an organisation", async () => {
    await expectFailure(client.topUp({ organizationId: "", amount: "1" }, admin), Code.InvalidArgument, "invalid_parameter", "organization_id");
    await expectFailure(client.getBalance({ organizationId: "" }, admin), Code.InvalidArgument, "invalid_parameter", "organization_id");
  });
});

describe("organisations", () => {
  it("GetBalance, GetUsage and ListKeys of an organisation that does not exist are NOT_FOUND organization_not_found", async () => {
    for (const call of [
      client.getBalance({ organizationId: "never-heard-of" }, admin),
      client.getUsage({ organizationId: "never-heard-of" }, admin),
      client.listKeys({ organizationId: "never-heard-of" }, admin),
    ]) {
      await expectFailure(call, Code.NotFound, "organization_not_found", "organization_id");
    }
  });

  it("ListOrganizations lists the configured ones and those made by TopUp or CreateKey, by id, with balance and limits", async () => {
    const own = createMemoryAccountStores();
    await own.seed([
      { organizationId: "org_b", name: "Beta", rpm: 60, tpm: 1000, initialCreditsNanos: 2_500_000_000n, keys: [] },
      { organizationId: "org_a", name: "Alpha", initialCreditsNanos: 0n, keys: [] },
    ]);
    const server = await serve(createAccountService({ stores: own, adminToken: ADMIN_TOKEN, now: () => new Date(clock), modelIds: MODEL_IDS }));
    try {
      const ownClient = createClient(AccountService, createConnectTransport({ baseUrl: server.url, httpVersion: "2" }));
      await ownClient.topUp({ organizationId: "org_c", amount: "0.5" }, admin);
      await ownClient.createKey({ organizationId: "org_d" }, admin);
      const { organizations } = await ownClient.listOrganizations({}, admin);
      expect(organizations.map(({ organizationId, name, balance, rpm, tpm }) => ({ organizationId, name, balance, rpm, tpm }))).toEqual([
        { organizationId: "org_a", name: "Alpha", balance: "0", rpm: undefined, tpm: undefined },
        { organizationId: "org_b", name: "Beta", balance: "2.5", rpm: 60, tpm: 1000 },
        { organizationId: "org_c", name: "", balance: "0.5", rpm: undefined, tpm: undefined },
        { organizationId: "org_d", name: "", balance: "0", rpm: undefined, tpm: undefined },
      ]);
      // Made by a key, the organisation exists: its balance is 0, not an error.
      expect((await ownClient.getBalance({ organizationId: "org_d" }, admin)).balance).toBe("0");
    } finally {
      await server.close();
    }
  });
});

describe("usage", () => {
  const record = (id: string, organizationId: string, fields: Partial<UsageRecord> = {}): UsageRecord => ({
    id,
    organizationId,
    keyId: "key_usage",
    model: "simulator/echo",
    provider: "simulator",
    promptTokens: 5,
    completionTokens: 4,
    reasoningTokens: 0,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    cost: "0.0000085",
    requestTags: [],
    latencyMs: 12,
    outcome: "ok",
    free: false,
    streamed: true,
    createdAt: START,
    ...fields,
  });

  beforeAll(async () => {
    await stores.seed(["usage-org", "busy-org", "quiet-org"].map((organizationId) => ({ organizationId, initialCreditsNanos: 0n, keys: [] })));
    await stores.usage.append([
      record("rtr_1", "usage-org", { createdAt: START + 1 }),
      record("rtr_other", "other-org"),
      record("rtr_2", "usage-org", {
        createdAt: START + 2,
        model: "test/ok",
        provider: "cheap",
        promptTokens: 1000,
        completionTokens: 250,
        reasoningTokens: 100,
        cachedTokens: 400,
        cacheWriteTokens: 50,
        cost: "0.0012345678901",
        requestTags: ["nightly", "eval"],
        outcome: "upstream_error",
        free: true,
        streamed: false,
      }),
    ]);
  });

  it("GetUsage lists the organisation's records newest first, with totals over them", async () => {
    const { records, totals } = await client.getUsage({ organizationId: "usage-org" }, admin);
    expect(records.map((r) => r.id)).toEqual(["rtr_2", "rtr_1"]);
    expect(records[0]).toMatchObject({
      organizationId: "usage-org",
      keyId: "key_usage",
      model: "test/ok",
      provider: "cheap",
      promptTokens: 1000,
      completionTokens: 250,
      reasoningTokens: 100,
      cachedTokens: 400,
      cacheWriteTokens: 50,
      cost: "0.0012345678901",
      requestTags: ["nightly", "eval"],
      latencyMs: 12,
      outcome: "upstream_error",
      free: true,
      streamed: false,
    });
    expect(timestampMs(records[0].createdAt!)).toBe(START + 2);
    // Exact decimal sum: 0.0012345678901 + 0.0000085.
    expect(totals).toMatchObject({ requests: 2n, promptTokens: 1005n, completionTokens: 254n, totalTokens: 1259n, cost: "0.0012430678901" });
  });

  it("GetUsage honours the limit, totals included", async () => {
    const { records, totals } = await client.getUsage({ organizationId: "usage-org", limit: 1 }, admin);
    expect(records.map((r) => r.id)).toEqual(["rtr_2"]);
    expect(totals).toMatchObject({ requests: 1n, totalTokens: 1250n, cost: "0.0012345678901" });
  });

  it("GetUsage answers 50 records by default and up to 1000", async () => {
    await stores.usage.append(Array.from({ length: 1001 }, (_, i) => record(`rtr_many_${i}`, "busy-org", { createdAt: START + i })));
    const byDefault = await client.getUsage({ organizationId: "busy-org" }, admin);
    expect(byDefault.records.length).toBe(50);
    expect(byDefault.records[0].id).toBe("rtr_many_1000");
    expect(byDefault.totals).toMatchObject({ requests: 50n, cost: "0.000425" });
    expect((await client.getUsage({ organizationId: "busy-org", limit: 1000 }, admin)).records.length).toBe(1000);
  });

  it("GetUsage of an organisation without records is empty with zero totals", async () => {
    const { records, totals } = await client.getUsage({ organizationId: "quiet-org" }, admin);
    expect(records).toEqual([]);
    expect(totals).toMatchObject({ requests: 0n, promptTokens: 0n, completionTokens: 0n, totalTokens: 0n, cost: "0" });
  });

  it.each([-1, 1001])("GetUsage refuses limit %i with INVALID_ARGUMENT param limit", async (limit) => {
    await expectFailure(client.getUsage({ organizationId: "usage-org", limit }, admin), Code.InvalidArgument, "invalid_parameter", "limit");
  });
});

describe("an unavailable store", () => {
  let broken: CoreServer;
  let brokenClient: Client<typeof AccountService>;

  beforeAll(async () => {
    const down = () => Promise.reject(new StoreUnavailableError("redis: connection refused"));
    const base = createMemoryAccountStores();
    const unavailable: AccountStores = {
      ...base,
      keys: { findByDigest: down, create: down, list: down, setDisabled: down },
      organizations: { exists: down, list: down },
      credits: { topUp: down, balance: down, spent: down },
      usage: { append: down, get: down, list: down },
    };
    broken = await serve(createAccountService({ stores: unavailable, adminToken: ADMIN_TOKEN, now: () => new Date(clock), modelIds: MODEL_IDS }));
    brokenClient = createClient(AccountService, createConnectTransport({ baseUrl: broken.url, httpVersion: "2" }));
  });

  afterAll(async () => {
    await broken?.close();
  });

  it.each([
    ["CreateKey", () => brokenClient.createKey({ organizationId: "acme" }, admin)],
    ["ListKeys", () => brokenClient.listKeys({ organizationId: "acme" }, admin)],
    ["DisableKey", () => brokenClient.disableKey({ keyId: "key_x" }, admin)],
    ["TopUp", () => brokenClient.topUp({ organizationId: "acme", amount: "1" }, admin)],
    ["GetBalance", () => brokenClient.getBalance({ organizationId: "acme" }, admin)],
    ["GetUsage", () => brokenClient.getUsage({ organizationId: "acme" }, admin)],
    ["ListOrganizations", () => brokenClient.listOrganizations({}, admin)],
  ])("makes %s UNAVAILABLE state_unavailable", async (_name, call) => {
    await expectFailure(call(), Code.Unavailable, "state_unavailable");
  });
});

const AccountClient = grpc.makeGenericClientConstructor(
  {
    TopUp: grpcMethod("/router.v1.AccountService/TopUp", TopUpRequestSchema, TopUpResponseSchema),
    GetBalance: grpcMethod("/router.v1.AccountService/GetBalance", GetBalanceRequestSchema, GetBalanceResponseSchema),
  },
  "AccountService",
);

describe("from a grpc-js client", () => {
  let grpcClient: grpc.Client;

  beforeAll(() => {
    grpcClient = new AccountClient(server.url.replace(/^http:\/\//, ""), grpc.credentials.createInsecure());
  });

  afterAll(() => grpcClient?.close());

  function unary<Res>(name: string, request: unknown, token: string): Promise<Res> {
    const metadata = new grpc.Metadata();
    metadata.set("authorization", `Bearer ${token}`);
    const call = (grpcClient as unknown as Record<string, Function>)[name].bind(grpcClient);
    return new Promise((resolve, reject) =>
      call(request, metadata, (error: grpc.ServiceError | null, response: Res) => (error ? reject(error) : resolve(response))),
    );
  }

  it("tops up and reads the balance with the token in the metadata", async () => {
    const topUp = await unary<TopUpResponse>("TopUp", create(TopUpRequestSchema, { organizationId: "grpc-org", amount: "12.5" }), ADMIN_TOKEN);
    expect(topUp.balance).toBe("12.5");
    const balance = await unary<GetBalanceResponse>("GetBalance", create(GetBalanceRequestSchema, { organizationId: "grpc-org" }), ADMIN_TOKEN);
    expect(balance.balance).toBe("12.5");
  });

  it("is refused UNAUTHENTICATED with a wrong token", async () => {
    const error = await unary("GetBalance", create(GetBalanceRequestSchema, { organizationId: "grpc-org" }), "wrong").then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );
    expect(error?.code).toBe(grpc.status.UNAUTHENTICATED);
  });
});

describe("buf curl", () => {
  it("finds the service through reflection, and health reports it SERVING", async () => {
    const { stdout } = await bufCurl("--list-services", server.url);
    expect(stdout.trim().split("\n")).toContain("router.v1.AccountService");
    const health = await bufCurl("--data", JSON.stringify({ service: "router.v1.AccountService" }), `${server.url}/grpc.health.v1.Health/Check`);
    expect(JSON.parse(health.stdout)).toEqual({ status: "SERVING" });
  });

  it("tops up and reads the balance schema-less, with the token in a header", async () => {
    const authorization = `Authorization: Bearer ${ADMIN_TOKEN}`;
    const topUp = await bufCurl("-H", authorization, "--data", '{"organizationId":"curl-org","amount":"3.25"}', `${server.url}/router.v1.AccountService/TopUp`);
    expect(JSON.parse(topUp.stdout)).toEqual({ balance: "3.25" });
    const balance = await bufCurl("-H", authorization, "--data", '{"organization_id":"curl-org"}', `${server.url}/router.v1.AccountService/GetBalance`);
    expect(JSON.parse(balance.stdout)).toEqual({ balance: "3.25" });
  });

  it("reports a missing token as unauthenticated", async () => {
    const error = await bufCurl("--data", '{"organizationId":"curl-org"}', `${server.url}/router.v1.AccountService/GetBalance`).then(
      () => undefined,
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(error?.code).not.toBe(0);
    expect(`${error?.stdout}${error?.stderr}`).toMatch(/unauthenticated/i);
  });
});

describe("the admin CLI (npm run admin)", () => {
  /** Runs scripts/admin.ts on this Node (24): exit code, stdout, stderr. */
  async function cli(args: string[], env: Record<string, string> = {}) {
    const childEnv = { ...process.env, CORE_URL: server.url, ROUTER_ADMIN_TOKEN: ADMIN_TOKEN, ...env };
    return run(process.execPath, [adminScript, ...args], { env: childEnv, timeout: 30_000 }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
    );
  }

  it("create-key prints the new key as JSON; the store holds its digest", async () => {
    const result = await cli(["create-key", "--org", "cli-org", "--name", "cli", "--rpm", "30", "--model", "simulator/echo", "--model", "test/ok"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/not shown again/);
    const printed = JSON.parse(result.stdout);
    expect(printed).toMatchObject({
      key: { organizationId: "cli-org", name: "cli", disabled: false, rpm: 30, allowedModels: ["simulator/echo", "test/ok"] },
      apiKey: expect.stringMatching(/^sk-rtr-/),
    });
    expect(printed.key.tpm).toBeUndefined();
    const stored = await stores.keys.findByDigest(sha256Hex(printed.apiKey));
    expect(stored).toMatchObject({ keyId: printed.key.keyId, organizationId: "cli-org", rpm: 30 });
  });

  it("balance prints the balance as a decimal string", async () => {
    await client.topUp({ organizationId: "cli-org", amount: "7.75" }, admin);
    const result = await cli(["balance", "--org", "cli-org"]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(result.stdout)).toEqual({ balance: "7.75" });
  });

  it("list-orgs prints every organisation with its balance", async () => {
    await client.topUp({ organizationId: "cli-listed", amount: "1.25" }, admin);
    const result = await cli(["list-orgs"]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    const { organizations } = JSON.parse(result.stdout);
    expect(organizations).toContainEqual({ organizationId: "cli-listed", name: "", balance: "1.25" });
    const ids = organizations.map((organization: { organizationId: string }) => organization.organizationId);
    expect(ids).toEqual([...ids].sort());
  });

  it.each([
    ["balance", ["balance", "--org", "cli-nobody"]],
    ["usage", ["usage", "--org", "cli-nobody"]],
    ["list-keys", ["list-keys", "--org", "cli-nobody"]],
  ])("%s of an organisation that does not exist is an error, exit 1, pointing to list-orgs", async (_name, args) => {
    const result = await cli(args);
    expect(result).toEqual({
      code: 1,
      stdout: "",
      stderr: "error: [not_found] No organization cli-nobody. (reason: organization_not_found, param: organization_id); list-orgs lists the organisations there are\n",
    });
  });

  it("reaches the core on GRPC_PORT when CORE_URL is unset", async () => {
    await client.topUp({ organizationId: "cli-port", amount: "2" }, admin);
    const result = await cli(["balance", "--org", "cli-port"], { CORE_URL: "", GRPC_PORT: new URL(server.url).port });
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(result.stdout)).toEqual({ balance: "2" });
  });

  it("a core that does not answer on GRPC_PORT: the line asks whether GRPC_PORT is right, and names CORE_URL for a core elsewhere", async () => {
    const port = String(await freePort());
    const result = await cli(["balance", "--org", "cli-port"], { CORE_URL: "", GRPC_PORT: port, HOST: "" });
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toMatch(
      new RegExp(
        `^error: cannot reach the core at http://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED.*, and is GRPC_PORT right\\? ` +
          "Without CORE_URL the core is looked for on 127\\.0\\.0\\.1; a core not on 127\\.0\\.0\\.1 is reached with CORE_URL \\(for example http://\\[::1\\]:50051\\)\\.\n$",
      ),
    );
    // The core of `HOST=::1 npm start` listens on ::1 only: the CORE_URL that reaches it.
    const onV6 = await cli(["balance", "--org", "cli-port"], { CORE_URL: "", GRPC_PORT: port, HOST: "::1" });
    expect(onV6.stderr).toContain(`HOST is "::1": a core listening there is reached with CORE_URL=http://[::1]:${port}.`);
  });

  it.each(["0", "http", "70000"])("refuses GRPC_PORT=%s when CORE_URL is unset", async (port) => {
    const result = await cli(["balance", "--org", "cli-port"], { CORE_URL: "", GRPC_PORT: port });
    expect(result).toEqual({
      code: 1,
      stdout: "",
      stderr: `error: GRPC_PORT must be the core's port number (1 to 65535), got "${port}"; or set CORE_URL\n`,
    });
  });

  it("reports a refused call on stderr with its reason and exit code 1", async () => {
    const wrong = await cli(["balance", "--org", "cli-org"], { ROUTER_ADMIN_TOKEN: "wrong" });
    expect(wrong).toMatchObject({ code: 1, stdout: "" });
    expect(wrong.stderr).toMatch(/^error: \[unauthenticated\].*reason: invalid_admin_token/);
    const invalid = await cli(["top-up", "--org", "cli-org", "--amount", "abc"]);
    expect(invalid).toMatchObject({ code: 1, stdout: "" });
    expect(invalid.stderr).toMatch(/\[invalid_argument\].*reason: invalid_parameter, param: amount/);
  });

  it("top-up --amount=-5 says the amount must be above 0", async () => {
    const result = await cli(["top-up", "--org", "cli-org", "--amount=-5"]);
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toBe('error: [invalid_argument] amount must be above 0, got "-5". (reason: invalid_parameter, param: amount)\n');
  });

  it("a core that does not answer: one line naming CORE_URL and what to check", async () => {
    const coreUrl = `http://127.0.0.1:${await freePort()}`;
    const result = await cli(["balance", "--org", "cli-org"], { CORE_URL: coreUrl });
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toMatch(
      new RegExp(
        `^error: cannot reach the core at ${coreUrl}: .*ECONNREFUSED.*\\. Is the core running \\(npm start or npm run start:core\\), and is CORE_URL right\\?\n$`,
      ),
    );
  });

  it("a CORE_URL that is not an http(s) URL is said so", async () => {
    const result = await cli(["balance", "--org", "cli-org"], { CORE_URL: "notaurl" });
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toBe('error: CORE_URL must be an http:// or https:// URL (for example http://127.0.0.1:50051), got "notaurl"\n');
  });

  it("refuses a command line it cannot honour, before calling the core", async () => {
    const commandLines = [
      ["balance"],
      ["balance", "--org", "a", "--amount", "5"],
      ["explode"],
      ["create-key", "--org", "a", "--rpm", "many"],
      ["balance", "--nope"],
      ["top-up", "--org", "a", "--amount", "-3"],
    ];
    // CORE_URL points nowhere: each must fail on its command line alone.
    const results = await Promise.all(commandLines.map((args) => cli(args, { CORE_URL: "http://127.0.0.1:9" })));
    results.forEach((result, i) => {
      expect(result, commandLines[i].join(" ")).toMatchObject({ code: 1, stdout: "" });
      expect(result.stderr, commandLines[i].join(" ")).toMatch(/^error: [^]*\(see --help\)\n$/);
    });
  });

  it("create-key with a model the catalogue does not have: exit 1 naming it, and no key", async () => {
    const result = await cli(["create-key", "--org", "cli-org", "--name", "t", "--model", "openai/gpt4o", "--model", "simulator/echo"]);
    expect(result).toEqual({
      code: 1,
      stdout: "",
      stderr:
        'error: [invalid_argument] allowed_models: "openai/gpt4o" is not a model of the catalogue; did you mean "openai/gpt-4o"? (reason: invalid_parameter, param: allowed_models)\n',
    });
  });

  it("names an unknown flag in one plain line", async () => {
    for (const [flag, args] of [
      ["--extra", ["balance", "--org", "org_dev", "--extra", "1"]],
      ["-x", ["balance", "-x"]],
    ] as const) {
      const result = await cli([...args], { CORE_URL: "http://127.0.0.1:9" });
      expect(result).toMatchObject({ code: 1, stdout: "" });
      expect(result.stderr).toBe(`error: unknown flag ${flag} (see --help)\n`);
    }
  });

  it("--help prints the commands", async () => {
    const result = await cli(["--help"]);
    expect(result.code).toBe(0);
    for (const command of ["list-orgs", "create-key", "list-keys", "disable-key", "enable-key", "top-up", "balance", "usage"]) {
      expect(result.stdout).toContain(command);
    }
  });
});

describe("startup's admin token", () => {
  /** startup() on the bundled configuration, with what it printed on stdout. */
  function startWith(env: Record<string, string>, options: { devKey?: boolean } = {}) {
    const printed: string[] = [];
    const write = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => (printed.push(String(chunk)), true));
    try {
      return { env: startup({ ...env, LOG_LEVEL: "silent" }, options).env, printed: printed.join("") };
    } finally {
      write.mockRestore();
    }
  }
  const TOKEN_LINE = /^Admin token for the account service \(set ROUTER_ADMIN_TOKEN to choose your own\): (rtr-admin-\S+)$/m;

  it("is generated and printed once when ROUTER_ADMIN_TOKEN is unset, differently each start", () => {
    const first = startWith({ ROUTER_DEV_KEY: "sk-dev" });
    const second = startWith({ ROUTER_DEV_KEY: "sk-dev" });
    expect(first.printed.match(new RegExp(TOKEN_LINE, "gm"))?.length).toBe(1);
    expect(TOKEN_LINE.exec(first.printed)?.[1]).toBe(first.env.ROUTER_ADMIN_TOKEN);
    expect(first.env.ROUTER_ADMIN_TOKEN!.length).toBeGreaterThan(30);
    expect(second.env.ROUTER_ADMIN_TOKEN).not.toBe(first.env.ROUTER_ADMIN_TOKEN);
  });

  it("is the operator's when set, and nothing is printed", () => {
    const { env, printed } = startWith({ ROUTER_DEV_KEY: "sk-dev", ROUTER_ADMIN_TOKEN: "my-own-token" });
    expect(env.ROUTER_ADMIN_TOKEN).toBe("my-own-token");
    expect(printed).toBe("");
  });

  it("is not made up by a process that does not serve the core (the split gateway)", () => {
    const { env, printed } = startWith({}, { devKey: false });
    expect(env.ROUTER_ADMIN_TOKEN).toBeUndefined();
    expect(printed).toBe("");
  });
});
