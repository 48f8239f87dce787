// API keys are known only by their SHA-256 digest: the stores never hold a
// clear key, and a presented key is hashed once per request.
import { createHash } from "node:crypto";

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
