// One `authenticate(accounts, caller)` for every service (issue 19): a missing
// key, then an unknown one, then a disabled one, each a 401 of its own; and no
// other core file reads the caller's key or builds the missing-key error.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { createAccounts } from "../../../core/accounts/accounts.ts";
import { authenticate } from "../../../core/accounts/check-key.ts";
import { createMemoryAccountStores } from "../../../core/accounts/memory-store.ts";
import { sha256Hex } from "../../../core/auth/keys.ts";
import { parseConfig } from "../../../core/config/load.ts";
import { Code, ConnectError, errorDetailOf } from "../../../core/errors.ts";
import { CallerSchema } from "../../../gen/router/v1/inference_pb.js";

const CORE = resolve(import.meta.dirname, "../../../core");

function sourceFiles(dir = CORE): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [relative(CORE, path)] : [];
  });
}

const config = parseConfig(
  JSON.stringify({
    providers: [{ id: "simulator", label: "Simulator", protocol: "simulator" }],
    models: [],
    organizations: [
      {
        id: "org", name: "Org", credits: "1",
        keys: [{ id: "key", sha256: sha256Hex("sk-good") }, { id: "off", sha256: sha256Hex("sk-off"), disabled: true }],
      },
    ],
  }),
);

async function refusalOf(promise: Promise<unknown>) {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(ConnectError);
  return { code: (error as ConnectError).code, reason: errorDetailOf(error as ConnectError)?.reason };
}

describe("authenticate(accounts, caller)", () => {
  it("gives the caller's key record, and refuses a missing, an unknown and a disabled key, in that order", async () => {
    const accounts = await createAccounts({ organizations: config.organizations, env: {}, stores: createMemoryAccountStores() });
    const caller = (apiKey: string) => create(CallerSchema, { apiKey });
    expect(await authenticate(accounts, caller("sk-good"))).toMatchObject({ keyId: "key", organizationId: "org" });
    expect(await refusalOf(authenticate(accounts, undefined))).toEqual({ code: Code.Unauthenticated, reason: "missing_api_key" });
    expect(await refusalOf(authenticate(accounts, caller("")))).toEqual({ code: Code.Unauthenticated, reason: "missing_api_key" });
    expect(await refusalOf(authenticate(accounts, caller("sk-unknown")))).toEqual({ code: Code.Unauthenticated, reason: "invalid_api_key" });
    expect(await refusalOf(authenticate(accounts, caller("sk-off")))).toEqual({ code: Code.Unauthenticated, reason: "key_disabled" });
    await accounts.close();
  });

  it("is the only place in core/ that reads the caller's key or says it is missing", () => {
    const offenders = sourceFiles()
      .filter((file) => file !== "accounts/check-key.ts" && file !== "errors.ts")
      .filter((file) => /caller\??\.apiKey|missingApiKey\(/.test(readFileSync(join(CORE, file), "utf8")));
    expect(offenders).toEqual([]);
  });
});
