import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { TurnErrorSchema, TurnSchema, TurnStatus } from "../../../../gen/router/v1/conversations_pb.js";
import { responseErrorOf } from "../../../../gateway/formats/responses/encode-error.ts";
import { encodeStoredResponse } from "../../../../gateway/formats/responses/stored-response.ts";

describe("a failed response's error (OpenAI's closed list of codes)", () => {
  it("a 429's reasons are rate_limit_exceeded, any other reason server_error; the message is ours", () => {
    for (const code of ["rate_limit_exceeded", "upstream_rate_limited", "free_quota_exhausted"]) expect(responseErrorOf({ code, message: "m" })).toEqual({ code: "rate_limit_exceeded", message: "m" });
    for (const code of ["instance_stopped", "internal_error", "upstream_error", ""]) expect(responseErrorOf({ code, message: "m" }).code).toBe("server_error");
  });

  it("a stored failed turn is told as the stream's response.failed tells it", () => {
    const failed = (code: string, message = "") =>
      encodeStoredResponse(create(TurnSchema, { id: "resp_1", status: TurnStatus.FAILED, error: create(TurnErrorSchema, { code, message }) })).error;
    expect(failed("upstream_rate_limited", "Every provider is rate limiting")).toEqual({ code: "rate_limit_exceeded", message: "Every provider is rate limiting" });
    expect(failed("instance_stopped")).toEqual({ code: "server_error", message: "The response failed." });
  });
});
