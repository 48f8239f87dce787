import { randomUUID } from "node:crypto";

/** A service id: `<prefix>_<uuid without dashes>` (decisions.md). */
export function newServiceId(prefix: string): string {
  return `${prefix}_${randomUUID().replaceAll("-", "")}`;
}
