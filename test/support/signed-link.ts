// What an answer's hosted asset URL is now: the authenticated route's URL with
// a signed link's query (docs/tasks.md, "Signed links"), fresh at each answer.
import { expect } from "vitest";

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Matches `<url>?expires=<Unix seconds>&signature=<base64url HMAC>`: the signed link of the asset at `url`. */
export const signedLink = (url: string) => expect.stringMatching(new RegExp(`^${escaped(url)}\\?expires=\\d+&signature=[\\w-]{43}$`));

/**
 * The value with every signed link's query cut off: two answers of the same task, read a second apart,
 * hand out links of different expiries (each answer signs fresh ones), and are otherwise equal.
 */
export function unsigned<T>(value: T): T {
  return JSON.parse(JSON.stringify(value).replace(/\?expires=\d+&signature=[\w-]{43}/g, "")) as T;
}
