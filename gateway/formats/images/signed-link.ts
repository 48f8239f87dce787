// The capability half of a signed asset link as its URL carries it
// (`?expires=<Unix seconds>&signature=<base64url>`, docs/tasks.md, "Signed
// links"): read from the query for the core to check. A URL with either
// parameter is a link, served without a key; one that is malformed is refused
// as the core refuses a forged one (403 link_invalid), saying nothing more.
import type { ParsedUrlQuery } from "node:querystring";
import { Code, routerError } from "../../../core/errors.ts";

export interface SignedLink {
  expires: bigint;
  signature: string;
}

/** Undefined for a URL that is no link (the authenticated route); else the link, well-formed. */
export function signedLinkOf(query: ParsedUrlQuery): SignedLink | undefined {
  const { expires, signature } = query;
  if (expires === undefined && signature === undefined) return undefined;
  // One of each, Unix seconds in at most 12 digits and a base64url HMAC-SHA256 (43 characters).
  if (typeof expires !== "string" || typeof signature !== "string" || !/^\d{1,12}$/.test(expires) || !/^[A-Za-z0-9_-]{43}$/.test(signature)) {
    throw routerError(Code.PermissionDenied, "link_invalid", "This link is not valid: its signature does not match (it was altered, or not made by this service).");
  }
  return { expires: BigInt(expires), signature };
}
