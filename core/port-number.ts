// Ports as the environment gives them (PORT, GRPC_PORT), read the same way by
// the entry points and the admin CLI.

/** The core's port when GRPC_PORT is unset. */
export const DEFAULT_GRPC_PORT = 50051;

/**
 * The port `value` names, 0 to 65535, or undefined when it is not written as
 * one (decimal digits only: JavaScript would read "0x0", "0.0" or " 0" as 0).
 */
export function portNumber(value: string): number | undefined {
  if (!/^\d{1,5}$/.test(value)) return undefined;
  const port = Number(value);
  return port <= 65535 ? port : undefined;
}
