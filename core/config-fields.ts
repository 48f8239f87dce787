// Field types the configuration's parts share (core/config/schema.ts and a
// provider's entry, core/providers/provider-config.ts), in a unit of their own
// so that both can use them without importing each other.
import { z } from "zod";

/** The name of an environment variable (where a secret is read from). */
export const environmentVariable = z.string().regex(/^[A-Z_][A-Z0-9_]*$/);

/** An http:// or https:// URL: anything else (ftp://, a host without a scheme) cannot reach an upstream. */
export const httpUrl = (example: string) =>
  z.url({
    protocol: /^https?$/,
    error: (issue) => `must be an http:// or https:// URL (for example ${example}), got ${JSON.stringify(issue.input)}`,
  });

