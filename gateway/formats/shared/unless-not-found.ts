import { Code, ConnectError } from "../../../core/errors.ts";

/**
 * A core call's answer, or `fallback` when the core says there is no such
 * thing (NotFound). Any other failure goes on to the caller: a core out of
 * reach is 503 core_unavailable, not an answer made as if nothing were found.
 */
export async function unlessNotFound<T, F>(call: Promise<T>, fallback: F): Promise<T | F> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof ConnectError && error.code === Code.NotFound) return fallback;
    throw error;
  }
}
