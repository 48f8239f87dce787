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
