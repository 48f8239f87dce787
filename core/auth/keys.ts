// API keys to organisations. Keys are held only as SHA-256 digests; a key from
// an environment variable (development keys) is hashed when the store is built.
import { createHash } from "node:crypto";
import type { Environment } from "../catalogue/catalogue.ts";
import type { OrganizationConfig } from "../config/schema.ts";
import { Code, missingApiKey, routerError } from "../errors.ts";

export interface KeyRecord {
  keyId: string;
  organizationId: string;
  disabled: boolean;
}

export interface KeyStore {
  findByDigest(sha256: string): KeyRecord | undefined;
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

export function createMemoryKeyStore(organizations: OrganizationConfig[], env: Environment): KeyStore {
  const byDigest = new Map<string, KeyRecord>();
  for (const org of organizations) {
    for (const key of org.keys) {
      const digest = key.sha256 ?? (key.env && env[key.env] ? sha256Hex(env[key.env]!) : undefined);
      if (digest) byDigest.set(digest, { keyId: key.id, organizationId: org.id, disabled: key.disabled });
    }
  }
  return { findByDigest: (digest) => byDigest.get(digest) };
}

/** Resolves a presented key; every failure is the spec's 401. */
export function authenticate(store: KeyStore, apiKey: string): KeyRecord {
  if (!apiKey) throw missingApiKey();
  const record = store.findByDigest(sha256Hex(apiKey));
  if (!record) throw routerError(Code.Unauthenticated, "invalid_api_key", "Invalid API key.");
  if (record.disabled) throw routerError(Code.Unauthenticated, "key_disabled", "This API key has been disabled.");
  return record;
}
