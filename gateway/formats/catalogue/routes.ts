// The catalogue endpoints. They need no key (decisions.md, observed).
import type { Context } from "koa";
import { invalidParameter } from "../../../core/errors.ts";
import { specErrorBody } from "../../errors/spec-error-body.ts";
import type { FormatDeps, FormatRoutes, GatewayFormat } from "../format.ts";
import { encodeModel, encodeProviderEntry } from "./encode.ts";

export const catalogue: GatewayFormat = { encodeError: specErrorBody, register: registerCatalogueRoutes };

function registerCatalogueRoutes(router: FormatRoutes, { core }: FormatDeps) {
  // The in-process core answers with the same message objects every time (the
  // catalogue is fixed at start), so each is encoded once. A remote core's
  // answers are new objects and are simply encoded per request.
  const encoded = new WeakMap<object, string>();
  const sendJson = (ctx: Context, answer: object, encode: () => unknown) => {
    let json = encoded.get(answer);
    if (json === undefined) {
      json = JSON.stringify(encode());
      encoded.set(answer, json);
    }
    ctx.type = "application/json";
    ctx.body = json;
  };

  router.get("/api/v1/models", async (ctx) => {
    const answer = await core.catalogue.listModels({});
    sendJson(ctx, answer, () => ({ data: answer.models.map(encodeModel) }));
  });

  router.get("/api/v1/modelProviderData", async (ctx) => {
    const id = ctx.query.id;
    if (typeof id !== "string" || id === "") {
      throw invalidParameter("id", "Query parameter id (<provider>/<model>) is required, once.");
    }
    const answer = await core.catalogue.getModel({ id });
    // The model's supported_parameters already aggregate its providers' (core).
    sendJson(ctx, answer, () => ({ ...encodeModel(answer.model!), provider_data: answer.providerData.map(encodeProviderEntry) }));
  });

  router.get("/api/v1/providerModels", async (ctx) => {
    const answer = await core.catalogue.listProviderEntries({});
    sendJson(ctx, answer, () => answer.entries.map(encodeProviderEntry));
  });
}
