// One text for one value, whatever order its objects' keys came in: the
// semantic cache's digests must be equal on every instance and every run for
// requests that mean the same (a client's JSON object may list its keys in
// any order), and differ for any that do not.

/** JSON with every object's keys sorted; undefined members left out, as JSON.stringify does. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const members: string[] = [];
  for (const key of Object.keys(value).sort()) {
    const member = (value as Record<string, unknown>)[key];
    if (member !== undefined) members.push(`${JSON.stringify(key)}:${canonicalJson(member)}`);
  }
  return `{${members.join(",")}}`;
}
