// A media model's configured supported_parameters are what the catalogue
// publishes and all the task endpoints take (core/catalogue/media-parameters.ts):
// a name there that the route's media adapter cannot serve would be published
// and then refused, or never reach the provider. So it is refused at start, at
// its line, with the name likely meant and the ones the route serves.
import type { z } from "zod";
import { configuredMediaParameters, servedMediaParameters, type MediaAdapters } from "../catalogue/media-parameters.ts";
import { createMediaAdapters } from "../providers/registry.ts";
import { closest } from "./problems.ts";
import type { RouterConfig } from "./schema.ts";

/** Made once: the adapters only describe what they carry here (no call is made). */
let adapters: MediaAdapters | undefined;

/** Each configured parameter of a media model that one of its routes cannot serve, as an issue at its path (and so its line). */
export function reportUnservedMediaParameters(config: Pick<RouterConfig, "models" | "providers">, ctx: z.RefinementCtx): void {
  adapters ??= createMediaAdapters();
  const protocols = new Map(config.providers.map((provider) => [provider.id, provider.protocol]));
  config.models.forEach((model, m) =>
    model.providers.forEach((route, r) => {
      const protocol = protocols.get(route.provider);
      const configured = configuredMediaParameters(model, route);
      if (!protocol || !configured) return;
      const served = [...servedMediaParameters(protocol, model, adapters!).keys()];
      // A route whose protocol runs no task of what the model makes is the task endpoints' 400 naming model, not this.
      if (served.length === 0) return;
      const own = route.supported_parameters?.length ? ["models", m, "providers", r, "supported_parameters"] : ["models", m, "supported_parameters"];
      configured.forEach((name, i) => {
        if (served.includes(name)) return;
        const meant = closest(name, served);
        const hint = meant ? `did you mean "${meant}"? ` : "";
        ctx.addIssue({ code: "custom", path: [...own, i], message: `"${name}" is not a parameter provider "${route.provider}" (protocol ${protocol}) serves for ${model.id}; ${hint}it serves: ${served.join(", ")}` });
      });
    }),
  );
}
