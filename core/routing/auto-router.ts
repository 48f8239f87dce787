// `router/auto` (docs/selection.md): the selector picks the model, and the
// request is then planned as if it had named that model. The key's allow-list
// and the organisation's preference apply (the caller is known before
// planning); routing's own requirements (tools, modalities, context...) and
// `provider.only` decide which models can serve at all.
import { create } from "@bufbuild/protobuf";
import { ReasoningOptionsSchema, RoutingAttemptSchema, type ContentPart, type GenerateRequest, type RoutingAttempt } from "../../gen/router/v1/inference_pb.js";
import type { Catalogue, ProviderRoute } from "../catalogue/catalogue.ts";
import { Code, routerError } from "../errors.ts";
import type { RouteCheck, SelectionNeeds } from "../selection/filter.ts";
import { AUTO_ROUTER_ID, selectModel, type Selection } from "../selection/select.ts";
import { estimatePromptTokens, requirementsOf } from "./capabilities.ts";

/** What router/auto needs to know of the caller: the key's allow-list and its organisation. */
export interface SelectionCaller {
  allowedModels: readonly string[];
  organizationId: string;
}

export const asksAutoRouter = (request: Pick<GenerateRequest, "model" | "models">) => [request.model, ...request.models].some(isAutoRouter);

const isAutoRouter = (requested: string) => requested === AUTO_ROUTER_ID || requested.startsWith(AUTO_ROUTER_ID + ":");

/**
 * The request with router/auto replaced by the selected model (in `model` and
 * `models`), and the selection's reasoning effort where the caller set none;
 * undefined when router/auto is not asked for.
 */
export function resolveAutoRouter(request: GenerateRequest, catalogue: Catalogue, caller: SelectionCaller | undefined): { request: GenerateRequest; selection: Selection } | undefined {
  if (!asksAutoRouter(request)) return undefined;
  const suffixed = [request.model, ...request.models].find((id) => isAutoRouter(id) && id !== AUTO_ROUTER_ID);
  if (suffixed) throw routerError(Code.InvalidArgument, "invalid_request_error", `${AUTO_ROUTER_ID} takes no suffix.`, { param: "model" });
  const only = request.provider?.only ?? [];
  const routeChecks: RouteCheck[] = requirementsOf(request).map((r) => ({ lacks: r.description, isMetBy: (route) => r.isMetBy(route) }));
  if (only.length > 0) routeChecks.push({ lacks: `a provider of provider.only (${only.join(", ")})`, isMetBy: (route: ProviderRoute) => only.includes(route.provider.id) });
  const selection = selectModel({ messages: request.messages, needs: needsOf(request), preference: request.selection?.preference }, catalogue, {
    allowedModels: caller?.allowedModels,
    organizationId: caller?.organizationId,
    routeChecks,
  });
  if (selection.error) throw routerError(Code.InvalidArgument, "no_model_fits", `${AUTO_ROUTER_ID}: ${selection.error}.`, { param: "model" });
  const picked = selection.selectedModel;
  const replace = (id: string) => (id === AUTO_ROUTER_ID ? picked : id);
  let resolved: GenerateRequest = { ...request, model: replace(request.model), models: request.models.map(replace) };
  if (selection.reasoningEffort && !request.reasoning) resolved = { ...resolved, reasoning: create(ReasoningOptionsSchema, { effort: selection.reasoningEffort }) };
  return { request: resolved, selection };
}

/** The routing trace's first entry: what router/auto picked and why (x-router-trace). */
export function selectionTraceEntry(selection: Selection): RoutingAttempt {
  return create(RoutingAttemptSchema, {
    modelId: AUTO_ROUTER_ID,
    provider: "selection",
    outcome: "selected",
    reason: `${selection.selectedModel} tags=${selection.assignedTags.join("+")} difficulty=${selection.difficulty} strategy=${selection.strategy}`,
  });
}

/** Only the prompt's size and media matter here: the rest is checked route by route (routeFits). */
function needsOf(request: GenerateRequest): SelectionNeeds {
  const modalities = new Set<"image" | "audio" | "file">();
  const visit = (part: ContentPart) => {
    const kind = part.part.case;
    if (kind === "image" || kind === "audio" || kind === "file") modalities.add(kind);
    else if (kind === "toolResult") part.part.value.content.forEach(visit);
  };
  for (const message of request.messages) message.content.forEach(visit);
  return { inputModalities: [...modalities], contextTokens: estimatePromptTokens(request) };
}
