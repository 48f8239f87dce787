// The presigned GET URL (core/tasks/s3-presign.ts) against the example of
// AWS's documentation ("Authenticating Requests: Using Query Parameters",
// Signature Version 4): the same URL, signature included, for the same key,
// time, region, bucket and object; and the encoding of keys and overrides.
import { describe, expect, it } from "vitest";
import { presignGetUrl, rfc3986Path } from "../../../core/tasks/s3-presign.ts";

const EXAMPLE = {
  objectUrl: new URL("https://examplebucket.s3.amazonaws.com/test.txt"),
  region: "us-east-1",
  credentials: { accessKeyId: "AKIAIOSFODNN7EXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" },
  expiresSeconds: 86400,
  now: new Date("2013-05-24T00:00:00Z"),
};

describe("presignGetUrl", () => {
  it("makes AWS's documented example URL, signature and all", () => {
    expect(presignGetUrl(EXAMPLE)).toBe(
      "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404",
    );
  });

  it("signs the response overrides and a session token with the rest, sorted and encoded, and caps the life at a week", () => {
    const url = new URL(presignGetUrl({ ...EXAMPLE, expiresSeconds: 10 ** 9, credentials: { ...EXAMPLE.credentials, sessionToken: "a/token+=" }, query: { "response-content-type": "image/png", "response-content-disposition": "inline" } }));
    expect([...url.searchParams.keys()]).toEqual([
      "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-Security-Token", "X-Amz-SignedHeaders",
      "response-content-disposition", "response-content-type", "X-Amz-Signature",
    ]);
    expect(url.search).toContain("X-Amz-Security-Token=a%2Ftoken%2B%3D");
    expect(url.searchParams.get("X-Amz-Expires")).toBe("604800");
    expect(url.searchParams.get("X-Amz-Signature")).not.toBe("aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404");
  });

  it("encodes each segment of a key once, keeping its slashes (an organisation's %-encoded name included)", () => {
    expect(rfc3986Path("prefix/org%20a/rtr_1/0")).toBe("prefix/org%2520a/rtr_1/0");
    expect(rfc3986Path("a b/(c)*!")).toBe("a%20b/%28c%29%2A%21");
  });
});
