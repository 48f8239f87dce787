// One log line per failed request, in proportion to what it means. Routine
// failures (no provider, upstream 5xx, store or core unavailable) happen in
// normal operation: one short warn line. A bug (an exception that is not a
// ConnectError, or internal_error) gets an error line with its stack. The
// ConnectError itself is never logged whole: its details carry a protobuf
// descriptor that made each line about 2.5 KB.
import type { Logger } from "pino";
import { ConnectError } from "../core/errors.ts";
import type { PublicError } from "./errors/http-status.ts";

/** Long enough for an upstream's reason, short enough to keep the line short. */
const MAX_MESSAGE_LENGTH = 200;

export interface FailureContext {
  requestId: string;
  /** The provider that was serving, when the failure came after the answer started. */
  provider?: string;
}

export function logFailure(logger: Logger, context: FailureContext, error: unknown, publicError: PublicError, what: string): void {
  const { code, status } = publicError;
  const { requestId } = context;
  if (!(error instanceof ConnectError)) {
    logger.error({ requestId, code, status, err: error }, what);
    return;
  }
  if (code === "internal_error") {
    logger.error({ requestId, code, status, err: withoutDetails(error) }, what);
    return;
  }
  const providers = providersTried(publicError) ?? context.provider;
  logger.warn({ requestId, code, status, providers, reason: truncate(error.rawMessage) }, what);
}

/** The providers of the routing trace in error metadata, in order, each once ("cheap,dear"). */
function providersTried(publicError: PublicError): string | undefined {
  const attempts = publicError.metadata?.attempts;
  if (!Array.isArray(attempts)) return undefined;
  const providers = attempts.map((attempt) => (attempt as { provider?: unknown } | null)?.provider).filter((provider) => typeof provider === "string");
  return providers.length > 0 ? [...new Set(providers)].join(",") : undefined;
}

/** The same message, stack and cause, without the details (and their descriptors). */
function withoutDetails(error: ConnectError): Error {
  const copy = new Error(error.message, { cause: error.cause });
  copy.name = error.name;
  copy.stack = error.stack;
  return copy;
}

function truncate(text: string): string {
  return text.length > MAX_MESSAGE_LENGTH ? `${text.slice(0, MAX_MESSAGE_LENGTH)}…` : text;
}
