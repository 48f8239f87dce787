// `reasoning_effort`, the top-level field the OpenAI SDK sends on chat completions (issue 18, 2):
// every level reaches the provider exactly as the same `reasoning.effort` does (through the
// route's reasoning_effort_map, with the same warnings), and sending both is a 400 naming both.
import OpenAI, { type APIError } from "openai";
import { describe, expect, it } from "vitest";
import { TEST_KEY, useGatewayWithUpstream } from "../../../support/harness.ts";

// The OpenAI SDK's ReasoningEffort values (node_modules/openai/resources/shared.d.ts).
const EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh", "max"] as const;

describe("chat completions reasoning_effort through the openai SDK", () => {
  const stack = useGatewayWithUpstream();
  const client = () => new OpenAI({ apiKey: TEST_KEY, baseURL: stack.gateway.apiUrl, maxRetries: 0 });
  const messages = [{ role: "user" as const, content: "Think first" }];

  /** What the provider was sent and what the answer warned, for one request. */
  async function served(body: Record<string, unknown>) {
    const params = { model: "test/thinker", messages, ...body } as OpenAI.ChatCompletionCreateParamsNonStreaming;
    const { response } = await client().chat.completions.create(params).withResponse();
    const sent = stack.upstream.requests.at(-1)!.body as Record<string, unknown>;
    return { sent: { reasoning_effort: sent.reasoning_effort, reasoning: sent.reasoning }, warnings: response.headers.get("x-router-warnings") ?? "" };
  }

  it.each(EFFORTS)("reasoning_effort %s is served as the same reasoning.effort is", async (effort) => {
    const topLevel = await served({ reasoning_effort: effort });
    const nested = await served({ reasoning: { effort } });
    expect(topLevel.sent).toEqual(nested.sent);
    expect(topLevel.warnings).toBe(nested.warnings.replaceAll("reasoning.effort", "reasoning_effort"));
  });

  it("reaches the provider through the route's effort map", async () => {
    expect((await served({ reasoning_effort: "low" })).sent.reasoning_effort).toBe("low");
    const xhigh = await served({ reasoning_effort: "xhigh" });
    expect(xhigh.sent.reasoning_effort).toBe("high");
    expect(xhigh.warnings).toContain("reasoning_effort xhigh was served as high");
    const max = await served({ reasoning_effort: "max" });
    expect(max.sent.reasoning_effort).toBe("high");
    expect(max.warnings).toContain("reasoning_effort max was served as high");
  });

  it("reasoning_effort null (the SDK's type allows it) is as if not sent", async () => {
    expect(await served({ reasoning_effort: null })).toEqual(await served({}));
  });

  it.each([
    [{ reasoning: { effort: "low" } }, "reasoning.effort"],
    [{ reasoning: { max_tokens: 2048 } }, "reasoning.max_tokens"],
    // The conflict is said first, not the budget's range (1024 to 32000).
    [{ reasoning: { max_tokens: 100 } }, "reasoning.max_tokens"],
    [{ reasoning: { effort: "low", max_tokens: 100 } }, "reasoning.effort"],
  ])("with %j as well: a 400 naming both", async (other, named) => {
    const before = stack.upstream.requests.length;
    const params = { model: "test/thinker", messages, reasoning_effort: "high", ...other } as OpenAI.ChatCompletionCreateParamsNonStreaming;
    const error = await client().chat.completions.create(params).then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as APIError).param).toBe("reasoning_effort");
    expect((error as APIError).message).toContain(`reasoning_effort and ${named} both set the reasoning effort`);
    expect(stack.upstream.requests.length).toBe(before);
  });

  it("combines with the reasoning object's other fields", async () => {
    const { sent } = await served({ reasoning_effort: "medium", reasoning: { exclude: true } });
    expect(sent.reasoning_effort).toBe("medium");
  });
});
