// The one error a shared account store throws when its backend cannot answer
// (Redis down, connection lost, a command failing). The core maps it to 503:
// the request is neither refused for a reason of its own nor admitted.
export class StoreUnavailableError extends Error {
  override name = "StoreUnavailableError";

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
  }
}
