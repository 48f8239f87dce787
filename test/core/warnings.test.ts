import { describe, expect, it } from "vitest";
import { toWarning, toWarnings, warning } from "../../core/warnings.ts";

describe("typed warnings", () => {
  it("routing's unsupported-parameter wording becomes unsupported_parameter naming the parameter", () => {
    const w = toWarning("top_p is not supported by test/plain on cheap and was ignored");
    expect({ code: w.code, param: w.param, message: w.message }).toEqual({
      code: "unsupported_parameter",
      param: "top_p",
      message: "top_p is not supported by test/plain on cheap and was ignored",
    });
  });

  it("other words become an adjustment with no parameter, the message kept whole", () => {
    const w = toWarning("cache_control breakpoints are not sent to cheap, which caches prompts automatically");
    expect([w.code, w.param]).toEqual(["adjusted_parameter", ""]);
  });

  it("typed warnings pass through unchanged", () => {
    const typed = warning("adjusted_parameter", "max_tokens", "max_tokens was raised to 1024");
    expect(toWarnings([typed, "the semantic cache is not available yet; the request was not cached"]).map((w) => [w.code, w.param])).toEqual([
      ["adjusted_parameter", "max_tokens"],
      ["unavailable_feature", "cache"],
    ]);
    expect(toWarnings([typed])[0]).toBe(typed);
  });
});
