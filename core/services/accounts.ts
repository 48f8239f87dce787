// The operators' account service: API keys, credits and the usage log, over
// the account stores. Every call is guarded by the admin token.
import { GATEWAY_EXPENSES } from "../cache/open-semantic-cache.ts";
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  ApiKeySchema,
  type AccountService,
  type ApiKey,
} from "../../gen/router/v1/accounts_pb.js";
import { fromStore } from "../accounts/refusals.ts";
import type { AccountStores, KeyRecord, UsageRecord } from "../accounts/store.ts";
import { formatNanos, parseNanos } from "../accounts/ledger-units.ts";
import { usageRecordToProto } from "../accounts/usage-proto.ts";
import { sha256Hex } from "../auth/keys.ts";
import { formatMoney, parseMoney } from "../billing/money.ts";
import { allowedModelProblem } from "../config/allowed-model.ts";
import { Code, echoed, invalidParameter, routerError } from "../errors.ts";
import { newServiceId } from "../ids.ts";

export interface AccountServiceDeps {
  stores: AccountStores;
  /** ROUTER_ADMIN_TOKEN; undefined or empty: the service refuses every call. */
  adminToken: string | undefined;
  now: () => Date;
  /** The catalogue's model ids: a key's allow-list may name only these. */
  modelIds: readonly string[];
}

export const USAGE_LIMIT_DEFAULT = 50;
export const USAGE_LIMIT_MAX = 1000;
/** 1e9 USD: far below what a signed 64-bit count of nano-dollars holds (about 9.2e9 USD). */
const TOP_UP_MAX_NANOS = 1_000_000_000n * 1_000_000_000n;

export function createAccountService(deps: AccountServiceDeps): ServiceImpl<typeof AccountService> {
  const { stores, now } = deps;
  const authorize = adminGuard(deps.adminToken);

  /**
   * An organisation the store knows. Reading one that does not exist is an
   * error, not an empty answer: a mistyped id must not look like a zero balance.
   */
  const knownOrganization = async (organizationId: string) => {
    requireOrganization(organizationId);
    if (!(await fromStore(stores.organizations.exists(organizationId)))) {
      throw routerError(Code.NotFound, "organization_not_found", `No organization ${echoed(organizationId)}.`, { param: "organization_id" });
    }
    return organizationId;
  };

  const setDisabled = async (keyId: string, disabled: boolean) => {
    if (!keyId) throw invalidParameter("key_id", "key_id is required.");
    const key = await fromStore(stores.keys.setDisabled(keyId, disabled));
    if (!key) throw routerError(Code.NotFound, "key_not_found", `No key ${echoed(keyId)}.`, { param: "key_id" });
    return { key: keyToProto(key) };
  };

  return {
    async createKey(request, context) {
      authorize(context);
      const organizationId = requireOrganization(request.organizationId);
      for (const param of ["rpm", "tpm"] as const) {
        const value = request[param];
        if (value !== undefined && value <= 0) throw invalidParameter(param, `${param} must be a positive number when set.`);
      }
      if (request.allowedModels.some((id) => !id.trim())) throw invalidParameter("allowed_models", "allowed_models holds an empty model id.");
      for (const id of request.allowedModels) {
        const problem = allowedModelProblem(id, deps.modelIds);
        if (problem) throw invalidParameter("allowed_models", `allowed_models: ${problem}${problem.endsWith("?") ? "" : "."}`);
      }
      // 32 random bytes: the key cannot be guessed; only its digest is stored.
      const apiKey = "sk-rtr-" + randomBytes(32).toString("base64url");
      const record = await fromStore(
        stores.keys.create({
          keyId: newServiceId("key"),
          organizationId,
          name: request.name,
          rpm: request.rpm,
          tpm: request.tpm,
          allowedModels: [...new Set(request.allowedModels)],
          digest: sha256Hex(apiKey),
          createdAt: now().getTime(),
        }),
      );
      // The store refuses a taken id; a fresh UUID colliding means something is badly wrong.
      if (!record) throw routerError(Code.Internal, "key_id_taken", "The new key id is already taken; try again.");
      return { key: keyToProto(record), apiKey };
    },

    async listKeys(request, context) {
      authorize(context);
      const keys = await fromStore(stores.keys.list(await knownOrganization(request.organizationId)));
      // Stores list in no particular order: oldest first makes the answer stable.
      keys.sort((a, b) => a.createdAt - b.createdAt || a.keyId.localeCompare(b.keyId));
      return { keys: keys.map(keyToProto) };
    },

    async disableKey(request, context) {
      authorize(context);
      return setDisabled(request.keyId, true);
    },

    async enableKey(request, context) {
      authorize(context);
      return setDisabled(request.keyId, false);
    },

    async topUp(request, context) {
      authorize(context);
      const organizationId = requireOrganization(request.organizationId);
      const nanos = parseAmount(request.amount);
      return { balance: formatNanos(await fromStore(stores.credits.topUp(organizationId, nanos))) };
    },

    async getBalance(request, context) {
      authorize(context);
      const organizationId = await knownOrganization(request.organizationId);
      return { balance: formatNanos(await fromStore(stores.credits.balance(organizationId))) };
    },

    async getUsage(request, context) {
      authorize(context);
      // The gateway's own expenses (a configured embedding provider's calls) are no organisation's, and always readable.
      const organizationId = request.organizationId === GATEWAY_EXPENSES ? GATEWAY_EXPENSES : await knownOrganization(request.organizationId);
      const limit = request.limit === 0 ? USAGE_LIMIT_DEFAULT : request.limit;
      if (limit < 1 || limit > USAGE_LIMIT_MAX) throw invalidParameter("limit", `limit must be between 1 and ${USAGE_LIMIT_MAX}.`);
      const records = await fromStore(stores.usage.list(organizationId, limit));
      return { records: records.map(usageRecordToProto), totals: totalsOf(records) };
    },

    async listOrganizations(_request, context) {
      authorize(context);
      const organizations = await fromStore(stores.organizations.list());
      return {
        organizations: organizations.map(({ organizationId, name, rpm, tpm, balanceNanos }) => ({ organizationId, name, rpm, tpm, balance: formatNanos(balanceNanos) })),
      };
    },
  };
}

/**
 * Checks `authorization: Bearer <token>` against the configured token. Both
 * sides are hashed first so the constant-time comparison has equal lengths and
 * says nothing about the token's length either.
 */
function adminGuard(adminToken: string | undefined): (context: HandlerContext) => void {
  const expected = adminToken ? createHash("sha256").update(adminToken).digest() : undefined;
  return (context) => {
    if (!expected) {
      throw routerError(Code.PermissionDenied, "admin_disabled", "The account service is disabled: ROUTER_ADMIN_TOKEN is not set on the core.");
    }
    const presented = /^Bearer\s+(\S+)\s*$/i.exec(context.requestHeader.get("authorization") ?? "")?.[1] ?? "";
    const digest = createHash("sha256").update(presented).digest();
    if (!presented || !timingSafeEqual(digest, expected)) {
      throw routerError(Code.Unauthenticated, "invalid_admin_token", "Missing or invalid admin token. Send Authorization: Bearer <ROUTER_ADMIN_TOKEN>.");
    }
  };
}

function requireOrganization(organizationId: string): string {
  if (!organizationId.trim()) throw invalidParameter("organization_id", "organization_id is required.");
  return organizationId;
}

const notAboveZero = (amount: string) => invalidParameter("amount", `amount must be above 0, got ${JSON.stringify(echoed(amount))}.`);

/** A decimal USD string to nano-dollars: more than zero, exact to the nano-dollar. */
function parseAmount(amount: string): bigint {
  let nanos: bigint;
  try {
    nanos = parseNanos(amount);
  } catch {
    // A negative decimal is a number all the same: say what is wrong with it.
    if (/^-\d+(\.\d+)?$/.test(amount.trim())) throw notAboveZero(amount);
    throw invalidParameter("amount", `amount must be a decimal number of USD with at most 9 decimal places, got ${JSON.stringify(echoed(amount))}.`);
  }
  if (nanos <= 0n) throw notAboveZero(amount);
  if (nanos > TOP_UP_MAX_NANOS) throw invalidParameter("amount", `amount must be at most ${formatNanos(TOP_UP_MAX_NANOS)}.`);
  return nanos;
}

function keyToProto(key: KeyRecord): ApiKey {
  return create(ApiKeySchema, {
    keyId: key.keyId,
    organizationId: key.organizationId,
    name: key.name,
    disabled: key.disabled,
    rpm: key.rpm,
    tpm: key.tpm,
    allowedModels: key.allowedModels,
    createdAt: timestampFromMs(key.createdAt),
  });
}

function totalsOf(records: UsageRecord[]) {
  let promptTokens = 0n;
  let completionTokens = 0n;
  let cost = 0n;
  for (const record of records) {
    promptTokens += BigInt(record.promptTokens);
    completionTokens += BigInt(record.completionTokens);
    cost += parseMoney(record.cost);
  }
  return {
    requests: BigInt(records.length),
    promptTokens,
    completionTokens,
    totalTokens: promptTokens + completionTokens,
    cost: formatMoney(cost),
  };
}
