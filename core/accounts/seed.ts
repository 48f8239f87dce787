// The configuration's organisations and keys, as the stores seed them. A key
// is given by its SHA-256 or by an environment variable holding it in clear
// (development keys), hashed here: the stores never see a clear key.
import type { Environment } from "../catalogue/catalogue.ts";
import type { OrganizationConfig } from "../config/schema.ts";
import { sha256Hex } from "../auth/keys.ts";
import { parseNanos } from "./ledger-units.ts";
import type { SeedOrganization } from "./store.ts";

/** Configuration keys carry no creation time of their own. */
const CONFIGURED_AT = 0;

/**
 * `generated` names the variables whose keys were made up at start (no
 * ROUTER_DEV_KEY): such a key never replaces a digest its id already has in
 * the store, so another instance's printed key keeps working.
 */
export function seedsFromConfig(organizations: OrganizationConfig[], env: Environment, generated: readonly string[] = []): SeedOrganization[] {
  return organizations.map((org) => ({
    organizationId: org.id,
    name: org.name,
    rpm: org.rpm,
    tpm: org.tpm,
    initialCreditsNanos: parseNanos(org.credits),
    keys: org.keys.flatMap((key) => {
      const digest = key.sha256 ?? (key.env && env[key.env] ? sha256Hex(env[key.env]!) : undefined);
      if (!digest) return [];
      return [
        {
          digest,
          keyId: key.id,
          organizationId: org.id,
          name: key.name ?? key.id,
          rpm: key.rpm,
          tpm: key.tpm,
          allowedModels: key.allowed_models,
          disabled: key.disabled,
          ...(key.env && generated.includes(key.env) && { keepStoredDigest: true }),
          createdAt: CONFIGURED_AT,
        },
      ];
    }),
  }));
}
