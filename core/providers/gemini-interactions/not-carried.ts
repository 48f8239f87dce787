// The words of a field the Gemini Interactions protocol has no place for.
import type { Warning } from "../../../gen/router/v1/inference_pb.js";
import { warning } from "../../warnings.ts";

export function notCarried(param: string, what = param, isPlural = false): Warning {
  return warning("unsupported_parameter", param, `${what} ${isPlural ? "are" : "is"} not supported by the Gemini Interactions protocol and ${isPlural ? "were" : "was"} ignored`);
}
