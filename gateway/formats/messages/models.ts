// GET /v1/models and /v1/models/{model_id} in Anthropic's shape, which the Anthropic SDK's
// models.list() and models.retrieve() read: the catalogue (the same models, in the same order,
// as /api/v1/models, which keeps the OpenAI-style shape) as a page of ModelInfo objects with
// Anthropic's cursor pagination (`limit`, `after_id`, `before_id`); one model by its id or, as
// the Messages route reads it, its bare name. Like every catalogue GET, they need no key (docs/contract.md).
import type { Context } from "koa";
import { ambiguousModel, echoed, invalidParameter } from "../../../core/errors.ts";
import { modelOfBareName } from "../../../wire/model-name.ts";
import type { Model } from "../../../gen/router/v1/catalogue_pb.js";
import type { FormatDeps, FormatRoutes } from "../format.ts";

/** Anthropic's page sizes: 20 unless asked, at most 1000. */
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 1000;

export function registerModelRoutes(router: FormatRoutes, { core }: FormatDeps) {
  router.get("/v1/models", async (ctx) => {
    const cursor = pageCursor(ctx);
    const listed = asksForActive(ctx);
    const { models } = await core.catalogue.listModels({});
    ctx.body = modelPage(listed ? models : [], cursor);
  });

  // The SDK sends the id's slash encoded (`anthropic%2Fclaude-sonnet-4`); curl users write it plain.
  // A bare name (`claude-sonnet-4-5`) is the catalogue model POST /v1/messages would serve for it.
  const answerModel = async (ctx: Context, id: string) => {
    const bare = id.includes("/") ? undefined : modelOfBareName((await core.catalogue.listModels({})).models, (model) => model.id, id, (ids) => ambiguousModel(id, ids, "model_id"));
    const model = bare ?? (await core.catalogue.getModel({ id })).model!;
    ctx.body = encodeModelInfo(model);
  };
  router.get("/v1/models/:id", (ctx) => answerModel(ctx, ctx.params.id));
  router.get("/v1/models/:author/:slug", (ctx) => answerModel(ctx, `${ctx.params.author}/${ctx.params.slug}`));
}

/** Anthropic's ModelInfo: its required fields, with what the catalogue knows (the rest null). */
export function encodeModelInfo(model: Model) {
  return {
    type: "model" as const,
    id: model.id,
    display_name: model.name || model.id,
    // RFC 3339, to the second, as Anthropic writes it.
    created_at: new Date(Number(model.created) * 1000).toISOString().replace(".000Z", "Z"),
    max_input_tokens: model.contextLength || null,
    max_tokens: model.topProvider?.maxCompletionTokens || null,
    capabilities: null,
    lifecycle: "active" as const,
    line: null,
    deprecated_at: null,
    retires_at: null,
  };
}

type Cursor = { limit: number; afterId?: string; beforeId?: string };

/** One page: after `afterId`, or the `limit` models before `beforeId` (the SDK pages backwards that way), or the first. */
export function modelPage(models: readonly Model[], { limit, afterId, beforeId }: Cursor) {
  const ids = models.map((model) => model.id);
  const indexOf = (id: string, param: string) => {
    const index = ids.indexOf(id);
    if (index < 0) throw invalidParameter(param, `${param} ${echoed(id)} is not a model of this catalogue.`);
    return index;
  };
  let start = 0;
  let end = Math.min(limit, models.length);
  let hasMore = end < models.length;
  if (afterId !== undefined) {
    start = indexOf(afterId, "after_id") + 1;
    end = Math.min(start + limit, models.length);
    hasMore = end < models.length;
  } else if (beforeId !== undefined) {
    end = indexOf(beforeId, "before_id");
    start = Math.max(0, end - limit);
    hasMore = start > 0;
  }
  const data = models.slice(start, end).map(encodeModelInfo);
  return { data, has_more: hasMore, first_id: data.at(0)?.id ?? null, last_id: data.at(-1)?.id ?? null };
}

function pageCursor(ctx: Context): Cursor {
  const limit = oneValue(ctx, "limit");
  const afterId = oneValue(ctx, "after_id");
  const beforeId = oneValue(ctx, "before_id");
  if (afterId !== undefined && beforeId !== undefined) throw invalidParameter("before_id", "before_id and after_id cannot be used together.");
  if (limit !== undefined && !/^\d{1,4}$/.test(limit)) throw invalidParameter("limit", `limit must be an integer between 1 and ${MAX_LIMIT}.`);
  const size = limit === undefined ? DEFAULT_LIMIT : Number(limit);
  if (size < 1 || size > MAX_LIMIT) throw invalidParameter("limit", `limit must be an integer between 1 and ${MAX_LIMIT}.`);
  return { limit: size, afterId, beforeId };
}

const LIFECYCLES = ["active", "deprecated", "retired"];

/**
 * Whether the `lifecycle` filter (`lifecycle[]=retired`, as the SDK sends it, or `lifecycle=`)
 * keeps active models, the only stage the catalogue has; none given keeps them.
 */
function asksForActive(ctx: Context): boolean {
  const stages = [ctx.query["lifecycle[]"], ctx.query.lifecycle].flat().filter((stage): stage is string => stage !== undefined && stage !== "");
  for (const stage of stages) {
    if (!LIFECYCLES.includes(stage)) throw invalidParameter("lifecycle", `lifecycle must be one of ${LIFECYCLES.join(", ")}.`);
  }
  return stages.length === 0 || stages.includes("active");
}

/** A query parameter given at most once (an empty value counts as not given). */
function oneValue(ctx: Context, name: string): string | undefined {
  const value = ctx.query[name];
  if (Array.isArray(value)) throw invalidParameter(name, `${name} must be given once.`);
  return value === undefined || value === "" ? undefined : value;
}
