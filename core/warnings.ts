// Typed warnings: a request parameter the core dropped or adjusted. Adapters
// and routing make them with `warning()`; they reach the caller on
// ResponseStart.warnings (the gateway joins their messages into
// `x-router-warnings`).
import { create } from "@bufbuild/protobuf";
import { type Warning, WarningSchema } from "../gen/router/v1/inference_pb.js";

/** Stable warning codes, so formats and clients can branch on them. */
export type WarningCode =
  /** The parameter is not supported by the serving route and was left out. */
  | "unsupported_parameter"
  /** The parameter was changed to fit the serving route (clamped, mapped, turned off). */
  | "adjusted_parameter"
  /** A router feature that was asked for is not available. */
  | "unavailable_feature";

export function warning(code: WarningCode, param: string, message: string): Warning {
  return create(WarningSchema, { code, param, message });
}

// `<param> is not supported by <model> on <provider> and was ignored`, the
// wording of routing's unsupported-parameter warnings.
const UNSUPPORTED = /^(\S+) is not supported by /;

/**
 * A warning still written as words (routing and the adapters' `warnings.ts`
 * until they make typed ones), given a code and, when the wording names it, the
 * parameter.
 */
export function toWarning(text: string): Warning {
  const unsupported = UNSUPPORTED.exec(text);
  if (unsupported) return warning("unsupported_parameter", unsupported[1]!, text);
  if (text.startsWith("the semantic cache")) return warning("unavailable_feature", "cache", text);
  return warning("adjusted_parameter", "", text);
}

/** Typed warnings from a mix of typed ones and words (see toWarning). */
export function toWarnings(warnings: ReadonlyArray<string | Warning>): Warning[] {
  return warnings.map((w) => (typeof w === "string" ? toWarning(w) : w));
}
