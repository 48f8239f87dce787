// The one error a shared account store throws when its backend cannot answer
// (Redis down, connection lost, a command failing). The core maps it to 503:
// the request is neither refused for a reason of its own nor admitted.
export class StoreUnavailableError extends Error {
  override name = "StoreUnavailableError";
  /**
   * Whether the command may have reached the backend and run (its reply lost
   * or late). False only when the store knows it never sent it (no
   * connection): then nothing was taken, so nothing needs releasing.
   */
  readonly mayHaveRun: boolean;

  constructor(message: string, options?: ErrorOptions & { mayHaveRun?: boolean }) {
    super(message, options);
    this.mayHaveRun = options?.mayHaveRun ?? true;
  }
}
