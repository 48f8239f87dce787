// Reads the caller's API key from the request headers. Validity is the core's
// business; here only presence and shape, so a bare request gets its 401 first.
import type { IncomingHttpHeaders } from "node:http";
import { Code, missingApiKey, routerError } from "../core/errors.ts";

export function bearerKey(headers: IncomingHttpHeaders): string {
  const header = headers.authorization;
  if (!header) throw missingApiKey();
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw routerError(Code.Unauthenticated, "invalid_api_key", "Malformed Authorization header. Expected: Bearer <API_KEY>.");
  return match[1];
}

/**
 * The key of a Messages request: `x-api-key` (Anthropic's header, which its
 * SDK and the coding agents send) or `Authorization: Bearer` (spec rule 2).
 * Only the Messages routes read `x-api-key`; elsewhere it is not a key.
 */
export function messagesKey(headers: IncomingHttpHeaders): string {
  const header = headers["x-api-key"];
  if (typeof header === "string" && header.trim() !== "" && !headers.authorization) return header.trim();
  if (!headers.authorization) throw missingApiKey("x-api-key: <API_KEY> or Authorization: Bearer <API_KEY>");
  return bearerKey(headers);
}

/**
 * The key of an Interactions request: `x-goog-api-key` (the header Google's
 * GenAI SDK sends) or `Authorization: Bearer`. Only the Interactions routes
 * read `x-goog-api-key`; elsewhere it is not a key.
 */
export function googleKey(headers: IncomingHttpHeaders): string {
  const header = headers["x-goog-api-key"];
  if (typeof header === "string" && header.trim() !== "" && !headers.authorization) return header.trim();
  if (!headers.authorization) throw missingApiKey("x-goog-api-key: <API_KEY> or Authorization: Bearer <API_KEY>");
  return bearerKey(headers);
}
