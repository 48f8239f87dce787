// A media model's configured supported_parameters (docs/catalogue.md,
// "Parameters"): where given, they are what the catalogue publishes and all the
// task endpoints take (core/catalogue/media-parameters.ts,
// core/tasks/given-parameter.ts). A name there that the route's media adapter
// does not carry would be published and then refused, or never reach the
// provider: it is refused at start, at its line, with the name likely meant and
// the ones the route carries.
import type { z } from "zod";
import { carriedMediaParameters, type MediaJobAdapter } from "../providers/media-job.ts";
import { createMediaAdapters, type ProviderProtocol } from "../providers/registry.ts";
import { closest } from "./problems.ts";
import type { ModelConfig, ModelProviderConfig, RouterConfig } from "./schema.ts";

/**
 * A media model: one that makes images or videos and no text (a model that
 * also makes text is a chat model, whose supported_parameters are chat's).
 */
export const isMediaModel = (model: Pick<ModelConfig, "output_modalities">) =>
  !model.output_modalities.includes("text") && model.output_modalities.some((output) => output === "image" || output === "video");

/**
 * The parameters the operator configured for a media model's route: the
 * route's own list, else the model's; undefined where neither gives one (an
 * empty list included, as the bundled configuration writes for media models),
 * and for any model that is not a media model. Then the derived list is published.
 */
export function configuredMediaParameters(model: Pick<ModelConfig, "output_modalities" | "supported_parameters">, route: Pick<ModelProviderConfig, "supported_parameters">): readonly string[] | undefined {
  if (!isMediaModel(model)) return undefined;
  if (route.supported_parameters?.length) return route.supported_parameters;
  return model.supported_parameters.length > 0 ? model.supported_parameters : undefined;
}

/** Made once: the adapters only describe what they carry here (no call is made). */
let adapters: Partial<Record<ProviderProtocol, MediaJobAdapter>> | undefined;

/** Each configured parameter of a media model that one of its routes does not carry, as an issue at its path (and so its line). */
export function reportUncarriedMediaParameters(config: Pick<RouterConfig, "models" | "providers">, ctx: z.RefinementCtx): void {
  adapters ??= createMediaAdapters();
  const protocols = new Map(config.providers.map((provider) => [provider.id, provider.protocol]));
  config.models.forEach((model, m) =>
    model.providers.forEach((route, r) => {
      const protocol = protocols.get(route.provider);
      const adapter = protocol && adapters![protocol];
      const configured = configuredMediaParameters(model, route);
      if (!adapter || !configured) return;
      const carried = carriedMediaParameters(adapter, model);
      // A route whose protocol runs no task of what the model makes is the task endpoints' 400 naming model, not this.
      if (carried.length === 0) return;
      const own = route.supported_parameters?.length ? ["models", m, "providers", r, "supported_parameters"] : ["models", m, "supported_parameters"];
      configured.forEach((name, i) => {
        if (carried.includes(name)) return;
        const meant = closest(name, carried);
        const hint = meant ? `did you mean "${meant}"? ` : "";
        ctx.addIssue({ code: "custom", path: [...own, i], message: `"${name}" is not a parameter provider "${route.provider}" (protocol ${protocol}) serves for ${model.id}; ${hint}it serves: ${carried.join(", ")}` });
      });
    }),
  );
}
