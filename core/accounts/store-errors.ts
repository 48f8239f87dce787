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

/**
 * A stored record that cannot be decoded: a bug or a corruption, not an
 * outage, so never StoreUnavailableError (503, retried). Retrying reads the
 * same bytes; the record is named so the log says which.
 */
export class UnreadableRecordError extends Error {
  override name = "UnreadableRecordError";
}
