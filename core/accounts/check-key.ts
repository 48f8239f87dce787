// The caller's key, without admitting anything: for a request refused before
// its admission (a bad key still gets its 401 first) and for reads such as a
// generation's record. Every service authenticates its caller here, in one
// order: a missing key, then an unknown key, then a disabled one.
import type { Caller } from "../../gen/router/v1/inference_pb.js";
import { sha256Hex } from "../auth/keys.ts";
import { missingApiKey } from "../errors.ts";
import { fromStore, refusalError } from "./refusals.ts";
import type { Accounts } from "./accounts.ts";
import type { KeyRecord } from "./store.ts";

/** The caller's key record: 401 when the key is missing, unknown or disabled. */
export async function authenticate(accounts: Pick<Accounts, "stores">, caller: Caller | undefined): Promise<KeyRecord> {
  return checkKey(accounts, callerKeyDigest(caller));
}

/**
 * The digest of the caller's key (what the account store knows keys by), its
 * presence checked: for a caller whose key the admission checks later.
 */
export function callerKeyDigest(caller: Caller | undefined): string {
  const apiKey = caller?.apiKey ?? "";
  if (!apiKey) throw missingApiKey();
  return sha256Hex(apiKey);
}

export async function checkKey(accounts: Pick<Accounts, "stores">, keyDigest: string): Promise<KeyRecord> {
  const key = await fromStore(accounts.stores.keys.findByDigest(keyDigest));
  if (!key) throw refusalError({ reason: "invalid_api_key" }, 0);
  if (key.disabled) throw refusalError({ reason: "key_disabled" }, 0);
  return key;
}
