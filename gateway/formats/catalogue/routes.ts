// The catalogue endpoints. They need no key (decisions.md, observed).
import type Router from "@koa/router";
import type { CoreClient } from "../../core-client.ts";
import { invalidParameter } from "../../../core/errors.ts";
import { encodeModel, encodeProviderEntry } from "./encode.ts";

export function registerCatalogueRoutes(router: Router, core: CoreClient) {
  router.get("/api/v1/models", async (ctx) => {
    const { models } = await core.catalogue.listModels({});
    ctx.body = { data: models.map(encodeModel) };
  });

  router.get("/api/v1/modelProviderData", async (ctx) => {
    const id = ctx.query.id;
    if (typeof id !== "string" || id === "") throw invalidParameter("id", "Query parameter id (<provider>/<model>) is required.");
    const { model, providerData } = await core.catalogue.getModel({ id });
    const encoded = encodeModel(model!);
    const entries = providerData.map(encodeProviderEntry);
    ctx.body = {
      ...encoded,
      // Aggregated: a parameter is supported when any provider supports it.
      supported_parameters: [...new Set(entries.flatMap((e) => e.supported_parameters))],
      provider_data: entries,
    };
  });

  router.get("/api/v1/providerModels", async (ctx) => {
    const { entries } = await core.catalogue.listProviderEntries({});
    ctx.body = entries.map(encodeProviderEntry);
  });
}
