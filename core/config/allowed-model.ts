// A key's allow-list (`allowed_models`, from the configuration or CreateKey) holds catalogue ids,
// as the admission step compares them: an id that is not one (a typo, a `:free` suffix) would
// refuse every request of the key with 403 model_not_allowed. Refused where it is written instead.
import type { z } from "zod";
import { editDistance } from "./problems.ts";
import type { RouterConfig } from "./schema.ts";

/** Why `id` cannot be in an allow-list of this catalogue, with the id likely meant; undefined when it can. */
export function allowedModelProblem(id: string, catalogueIds: readonly string[]): string | undefined {
  if (catalogueIds.includes(id)) return undefined;
  const quoted = JSON.stringify(id);
  const colon = id.lastIndexOf(":");
  const base = colon > 0 ? id.slice(0, colon) : undefined;
  if (base !== undefined && catalogueIds.includes(base)) {
    return `${quoted} carries a suffix: the allow-list takes catalogue ids without one (${JSON.stringify(base)} allows ${quoted} too)`;
  }
  const meant = nearestId(id, catalogueIds);
  return `${quoted} is not a model of the catalogue` + (meant ? `; did you mean ${JSON.stringify(meant)}?` : "");
}

/** The catalogue id a mistyped one was likely meant as: its bare name's only model, or a few letters off. */
function nearestId(id: string, catalogueIds: readonly string[]): string | undefined {
  // A bare name is what follows the provider (routing/model-id.ts, which config may not import: it imports config).
  const sameName = catalogueIds.filter((candidate) => candidate.slice(candidate.indexOf("/") + 1) === id);
  if (!id.includes("/") && sameName.length === 1) return sameName[0];
  let best: { id: string; distance: number } | undefined;
  for (const candidate of catalogueIds) {
    const limit = Math.max(1, Math.floor(candidate.length / 5));
    // Lengths further apart than the limit are further apart in edits too (and a long id costs nothing).
    if (Math.abs(candidate.length - id.length) > limit) continue;
    const distance = editDistance(id, candidate);
    if (distance <= limit && (!best || distance < best.distance)) best = { id: candidate, distance };
  }
  return best?.id;
}

/** The configuration's keys: each allow-list id its models do not have, as an issue at its path (and so its line). */
export function reportUnknownAllowedModels(config: Pick<RouterConfig, "models" | "organizations">, ctx: z.RefinementCtx): void {
  const modelIds = config.models.map((model) => model.id);
  config.organizations.forEach((organization, o) =>
    organization.keys.forEach((key, k) =>
      key.allowed_models.forEach((id, i) => {
        const problem = allowedModelProblem(id, modelIds);
        if (problem) ctx.addIssue({ code: "custom", path: ["organizations", o, "keys", k, "allowed_models", i], message: problem });
      }),
    ),
  );
}
