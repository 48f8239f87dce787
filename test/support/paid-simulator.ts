// A gateway configuration with one paid simulator model, for tests of what the
// accounts do around a request (outages, re-seeding), and the one chat request
// they send to it.
import { parseConfig } from "../../core/config/load.ts";
import type { Gateway } from "./harness.ts";

export interface PaidSimulatorOptions {
  /** The environment variable holding org_paid's one key (key_paid). */
  keyEnv: string;
  /** org_paid's starting credits, in dollars. */
  credits: string;
  /** sim/paid's prices per token, in dollars. */
  pricing: { prompt: string; completion: string };
}

/** sim/paid (the simulator's echo, max_tokens only) and organisation org_paid with key key_paid. */
export function paidSimulatorConfig({ keyEnv, credits, pricing }: PaidSimulatorOptions) {
  return parseConfig(
    JSON.stringify({
      providers: [{ id: "simulator", label: "Simulator", protocol: "simulator" }],
      models: [
        {
          id: "sim/paid", name: "Paid", created: 1700000000, creator: "sim", context_length: 8192, max_completion_tokens: 100,
          input_modalities: ["text"], output_modalities: ["text"], supported_parameters: ["max_tokens"],
          providers: [{ provider: "simulator", provider_model_id: "echo", pricing }],
        },
      ],
      organizations: [{ id: "org_paid", name: "Paid", credits, keys: [{ id: "key_paid", env: keyEnv }] }],
    }),
  );
}

export interface ChatAnswer {
  status: number;
  json: { error?: { code: string } };
}

/** A chat completion of `model` (max_tokens 3, "hi") sent with `key`: its status and JSON body. */
export async function chatWithKey(gateway: Gateway, key: string, model = "sim/paid"): Promise<ChatAnswer> {
  const response = await fetch(`${gateway.apiUrl}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, max_tokens: 3, messages: [{ role: "user", content: "hi" }] }),
  });
  return { status: response.status, json: (await response.json()) as ChatAnswer["json"] };
}
