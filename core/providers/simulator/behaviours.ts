// What the simulator does, chosen by the route's provider_model_id, so routing,
// fallback and client code can be exercised offline (like TensorZero's dummy).
export type SimulatorBehaviour =
  | "echo"
  | "slow"
  | "error-429"
  | "error-503"
  | "cut-mid-stream"
  | "tool-call"
  | "reasoning"
  | "audio";

const BEHAVIOURS: readonly SimulatorBehaviour[] = ["echo", "slow", "error-429", "error-503", "cut-mid-stream", "tool-call", "reasoning", "audio"];

/** Unknown ids behave like `echo`, so any configured simulator model answers. */
export function behaviourOf(providerModelId: string): SimulatorBehaviour {
  return (BEHAVIOURS as readonly string[]).includes(providerModelId) ? (providerModelId as SimulatorBehaviour) : "echo";
}

/** Milliseconds between chunks of the `slow` behaviour when the provider sets no pacing. */
export const SLOW_CHUNK_DELAY_MS = 100;
