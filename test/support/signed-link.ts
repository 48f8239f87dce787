// What an answer's hosted asset URL is now: the authenticated route's URL with
// a signed link's query (docs/tasks.md, "Signed links"), fresh at each answer.
import { expect } from "vitest";

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Matches `<url>?expires=<Unix seconds>&signature=<base64url HMAC>`: the signed link of the asset at `url`. */
export const signedLink = (url: string) => expect.stringMatching(new RegExp(`^${escaped(url)}\\?expires=\\d+&signature=[\\w-]{43}$`));
