// The key alone, without admitting anything: for a request refused before its
// admission (a bad key still gets its 401 first) and for reads such as a
// generation's record.
import { fromStore, refusalError } from "./refusals.ts";
import type { Accounts } from "./accounts.ts";
import type { KeyRecord } from "./store.ts";

export async function checkKey(accounts: Pick<Accounts, "stores">, keyDigest: string): Promise<KeyRecord> {
  const key = await fromStore(accounts.stores.keys.findByDigest(keyDigest));
  if (!key) throw refusalError({ reason: "invalid_api_key" }, 0);
  if (key.disabled) throw refusalError({ reason: "key_disabled" }, 0);
  return key;
}
