// "<model> needs A or B to be set": what a model's disabled routes lack, said
// by chat's planner and by the media task endpoints alike.
import type { ProviderRoute } from "../catalogue/catalogue.ts";

/**
 * What one disabled route lacks, in words: its api_key_env (or the variable
 * of the credentials its protocol finds itself: "VERTEX_ACCESS_TOKEN or
 * GOOGLE_APPLICATION_CREDENTIALS"), and its secret_key_env for a provider that
 * signs with a second key ("A and B"); undefined when it lacks no variable.
 */
function unsetKeyVariables(route: ProviderRoute): string | undefined {
  const { api_key_env, secret_key_env } = route.provider;
  const ambient = route.capabilities.ambientCredentials?.variable;
  const key = api_key_env && !route.apiKey ? (ambient ? `${api_key_env} or ${ambient}` : api_key_env) : undefined;
  const secret = secret_key_env && !route.secretKey ? secret_key_env : undefined;
  const missing = [key, secret].filter((name) => name !== undefined);
  return missing.length === 0 ? undefined : missing.join(" and ");
}

/** The key variables the disabled routes among `routes` lack; undefined when none lacks one. */
export function missingKeysMessage(modelId: string, routes: readonly ProviderRoute[]): string | undefined {
  const alternatives = [...new Set(routes.filter((route) => !route.enabled).flatMap((route) => unsetKeyVariables(route) ?? []))];
  if (alternatives.length === 0) return undefined;
  // One provider's pair or choice is bracketed when other providers are named beside it.
  const named = alternatives.length > 1 ? alternatives.map((names) => (/ (and|or) /.test(names) ? `(${names})` : names)) : alternatives;
  return `${modelId} needs ${named.join(" or ")} to be set`;
}
