// The one place where core errors become HTTP: (code, reason) -> status and
// the public error's fields. Formats only shape the body around these fields
// (each format's encode-error.ts); the headers are error-headers.ts.
import { Code, ConnectError } from "@connectrpc/connect";
import type { JsonObject } from "@bufbuild/protobuf";
import { errorDetailOf } from "../../core/errors.ts";

export interface PublicError {
  status: number;
  type: string;
  /** The spec's `error.code`: the core's stable reason. */
  code: string;
  message: string;
  param: string | null;
  retryAfterSeconds: number;
  metadata: JsonObject | undefined;
}

type ErrorType = "invalid_request_error" | "rate_limit_error" | "billing_error" | "api_error" | "permission_error";

/** Reasons whose status differs from what their gRPC code alone would give. */
const BY_REASON: Record<string, { status: number; type: ErrorType }> = {
  upstream_error: { status: 502, type: "api_error" },
  insufficient_credits: { status: 402, type: "billing_error" },
  payload_too_large: { status: 413, type: "invalid_request_error" },
  unsupported_content_encoding: { status: 415, type: "invalid_request_error" },
  method_not_allowed: { status: 405, type: "invalid_request_error" },
};

const BY_CODE: Partial<Record<Code, { status: number; type: ErrorType }>> = {
  [Code.InvalidArgument]: { status: 400, type: "invalid_request_error" },
  [Code.FailedPrecondition]: { status: 400, type: "invalid_request_error" },
  [Code.OutOfRange]: { status: 400, type: "invalid_request_error" },
  [Code.Unauthenticated]: { status: 401, type: "invalid_request_error" },
  [Code.AlreadyExists]: { status: 409, type: "invalid_request_error" },
  [Code.PermissionDenied]: { status: 403, type: "permission_error" },
  [Code.NotFound]: { status: 404, type: "invalid_request_error" },
  [Code.ResourceExhausted]: { status: 429, type: "rate_limit_error" },
  [Code.Canceled]: { status: 499, type: "invalid_request_error" },
  [Code.Unavailable]: { status: 503, type: "api_error" },
  [Code.DeadlineExceeded]: { status: 504, type: "api_error" },
};

const INTERNAL: PublicError = {
  status: 500,
  type: "api_error",
  code: "internal_error",
  message: "Internal server error.",
  param: null,
  retryAfterSeconds: 0,
  metadata: undefined,
};

/** A split gateway whose core does not answer (refused, reset, unreachable). */
const CORE_UNAVAILABLE: PublicError = {
  ...INTERNAL,
  status: 503,
  code: "core_unavailable",
  message: "The gateway cannot reach the core; try again shortly.",
  retryAfterSeconds: 1,
};

/** A remote call aborted because the caller left (the core's own words for it: client_closed). */
const CALLER_LEFT: PublicError = { ...INTERNAL, status: 499, type: "invalid_request_error", code: "client_closed", message: "The caller went away." };

/** Errors without our ErrorDetail, by gRPC code; any other code is an internal error. */
const WITHOUT_DETAIL: Partial<Record<Code, PublicError>> = {
  [Code.Unavailable]: CORE_UNAVAILABLE,
  [Code.Canceled]: CALLER_LEFT,
};

export function toPublicError(error: unknown): PublicError {
  if (!(error instanceof ConnectError)) return INTERNAL;
  const detail = errorDetailOf(error);
  // Without our ErrorDetail the core did not make the error: it is the
  // transport's (its message names internal addresses) or a bug. Its words
  // stay in the log; the answer says only what the caller can act on.
  if (!detail) return WITHOUT_DETAIL[error.code] ?? INTERNAL;
  // The remote core client's words for a transport failure: they name the core's address.
  if (detail.reason === "core_unavailable") return CORE_UNAVAILABLE;
  const reason = detail.reason || "internal_error";
  const mapped = BY_REASON[reason] ?? BY_CODE[error.code] ?? { status: 500, type: "api_error" };
  return {
    ...mapped,
    code: reason,
    // Internal failures keep their details in the log, not in the answer.
    message: mapped.status === 500 ? "Internal server error." : error.rawMessage,
    param: detail.param || null,
    retryAfterSeconds: detail.retryAfterSeconds,
    metadata: detail.metadata,
  };
}
