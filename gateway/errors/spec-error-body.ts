// The error body of the public contract (spec: Errors), the shape an
// OpenAI-style client reads: `{error: {message, type, param, code}}`. Chat
// completions answer with it, and so does every request no format has claimed
// yet (no route, an unreadable body).
import type { JsonObject } from "@bufbuild/protobuf";
import type { PublicError } from "./http-status.ts";

/** Error metadata the spec puts at the top level of the body, beside `error`. */
const TOP_LEVEL_FIELDS: Record<string, readonly string[]> = {
  free_quota_exhausted: ["quota_limit", "quota_used", "reset_at"],
};

/** The spec's error body; only 429 bodies carry `status` (docs/contract.md). */
export function specErrorBody(error: PublicError): { error: JsonObject } & JsonObject {
  const body: JsonObject = { message: error.message, type: error.type, param: error.param, code: error.code };
  if (error.status === 429) body.status = 429;
  const lifted = TOP_LEVEL_FIELDS[error.code] ?? [];
  const topLevel: JsonObject = {};
  const metadata: JsonObject = {};
  for (const [field, value] of Object.entries(error.metadata ?? {})) {
    if (lifted.includes(field)) topLevel[field] = value;
    else metadata[field] = value;
  }
  if (Object.keys(metadata).length > 0) body.metadata = metadata;
  return { error: body, ...topLevel };
}
