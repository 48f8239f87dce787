// The catalogue endpoints. They need no key (docs/contract.md).
import type { Context } from "koa";
import { invalidParameter } from "../../../core/errors.ts";
import { specErrorBody } from "../../errors/spec-error-body.ts";
import type { FormatDeps, FormatRoutes, GatewayFormat } from "../format.ts";
import { encodeModel, encodeProviderEntry } from "./encode-response.ts";

export const catalogue: GatewayFormat = { encodeError: specErrorBody, register: registerCatalogueRoutes };

function registerCatalogueRoutes(router: FormatRoutes, { core }: FormatDeps) {
  // The in-process core answers with the same message objects every time (the
  // catalogue is fixed at start), so each is encoded once per route (two routes
  // encode the same GetModel answer differently). A remote core's answers are
  // new objects and are simply encoded per request.
  const jsonSender = () => {
    const encoded = new WeakMap<object, string>();
    return (ctx: Context, answer: object, encode: () => unknown) => {
      let json = encoded.get(answer);
      if (json === undefined) {
        json = JSON.stringify(encode());
        encoded.set(answer, json);
      }
      ctx.type = "application/json";
      ctx.body = json;
    };
  };
  const [sendList, sendModel, sendModelProviderData, sendProviderModels] = [jsonSender(), jsonSender(), jsonSender(), jsonSender()];

  router.get("/api/v1/models", async (ctx) => {
    const answer = await core.catalogue.listModels({});
    sendList(ctx, answer, () => ({ data: answer.models.map(encodeModel) }));
  });

  // One model, as an entry of /models (beyond the spec: the OpenAI SDK's models.retrieve). The SDK
  // sends the id's slash encoded (`openai%2Fgpt-4o`), curl users write it plain.
  const answerModel = async (ctx: Context, id: string) => {
    const answer = await core.catalogue.getModel({ id });
    sendModel(ctx, answer, () => encodeModel(answer.model!));
  };
  router.get("/api/v1/models/:id", (ctx) => answerModel(ctx, ctx.params.id));
  router.get("/api/v1/models/:author/:slug", (ctx) => answerModel(ctx, `${ctx.params.author}/${ctx.params.slug}`));

  router.get("/api/v1/modelProviderData", async (ctx) => {
    const id = ctx.query.id;
    if (typeof id !== "string" || id === "") {
      throw invalidParameter("id", "Query parameter id (<provider>/<model>) is required, once.");
    }
    const answer = await core.catalogue.getModel({ id });
    // The model's supported_parameters already aggregate its providers' (core).
    sendModelProviderData(ctx, answer, () => ({ ...encodeModel(answer.model!), provider_data: answer.providerData.map(encodeProviderEntry) }));
  });

  router.get("/api/v1/providerModels", async (ctx) => {
    const answer = await core.catalogue.listProviderEntries({});
    sendProviderModels(ctx, answer, () => answer.entries.map(encodeProviderEntry));
  });
}
