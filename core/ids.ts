import { randomUUID } from "node:crypto";

/** A service id: `<prefix>_<uuid without dashes>` (docs/contract.md). */
export function newServiceId(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll("-", "")}`;
}
