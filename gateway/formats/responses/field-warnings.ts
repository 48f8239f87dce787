// The typed warnings of Responses fields the gateway accepts but cannot fully
// honour (docs/responses.md, "Fields real clients send"). They travel on
// GenerateRequest.warnings and come back with routing's own, in
// `x-router-warnings`. Fields accepted with nothing to warn about (a cache
// hint, client metadata) are not here.
import type { Warning } from "../../../gen/router/v1/inference_pb.js";
import { warning } from "../../../core/warnings.ts";
import type { ResponsesRequestBody } from "./schema.ts";

const DROPPED_TOOL_REASONS = {
  web_search: "OpenAI's web search runs on OpenAI only",
  custom: "custom tools (free-form input with a grammar) are not served",
  tool_search: "tool search (deferred tools) is not served",
} as const;

export function fieldWarnings(body: ResponsesRequestBody): Warning[] {
  const warnings = body.droppedTools.map(({ index, type, name }) =>
    warning("unsupported_parameter", `tools[${index}]`, `tools[${index}] (${type}${name ? ` ${name}` : ""}) was left out: ${DROPPED_TOOL_REASONS[type]}`),
  );
  const effort = body.reasoning?.effort;
  if (effort === "xhigh" || effort === "max") {
    warnings.push(warning("adjusted_parameter", "reasoning.effort", `reasoning.effort ${effort} was served as high, the router's highest level`));
  }
  if (body.truncation === "auto") {
    warnings.push(warning("adjusted_parameter", "truncation", "truncation auto was served as disabled: the gateway never drops input items, so an input longer than the model's context is refused"));
  }
  if (body.service_tier !== undefined && body.service_tier !== "auto" && body.service_tier !== "default") {
    warnings.push(warning("adjusted_parameter", "service_tier", `service_tier ${body.service_tier} was served at the default tier, the only one the gateway has`));
  }
  if (body.text?.verbosity !== undefined && body.text.verbosity !== "medium") {
    warnings.push(warning("unsupported_parameter", "text.verbosity", `text.verbosity ${body.text.verbosity} was not sent: no upstream protocol here takes it`));
  }
  if ((body.top_logprobs ?? 0) > 0 || body.include?.includes("message.output_text.logprobs")) {
    warnings.push(warning("unsupported_parameter", "top_logprobs", "log probabilities are not returned: the gateway reports none (output_text.logprobs stays empty)"));
  }
  const detail = fileImageDetail(body.input);
  if (detail) {
    warnings.push(warning("unsupported_parameter", detail.param, `${detail.param} ${detail.value} was not sent: an image given by file_id goes upstream as a file reference, which has no detail`));
  }
  return warnings;
}

/** The first input_image given by file_id with a detail other than auto (said once, as the adapters say their drops). */
function fileImageDetail(input: ResponsesRequestBody["input"]): { param: string; value: string } | undefined {
  if (typeof input === "string") return undefined;
  for (const [itemIndex, item] of input.entries()) {
    if (item.type !== "message" || typeof item.content === "string") continue;
    for (const [partIndex, part] of item.content.entries()) {
      if (part.type === "input_image" && part.image_url === undefined && part.detail !== undefined && part.detail !== "auto") {
        return { param: `input[${itemIndex}].content[${partIndex}].detail`, value: part.detail };
      }
    }
  }
  return undefined;
}
