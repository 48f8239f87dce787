// Query parameters as the formats read them: each given at most once.
import { invalidParameter } from "../../../core/errors.ts";

export function queryString(value: string | string[] | undefined, name: string): string | undefined {
  if (Array.isArray(value)) throw invalidParameter(name, `Query parameter ${name} must be given once.`);
  return value;
}
