// OpenAI's namespaced functions (a `namespace` tool: Codex CLI declares its
// MCP servers' tools and its sub-agent tools this way). Upstream protocols
// have flat tool names, so each function goes up as `<namespace>__<name>`, and
// a call to it comes back split: `name` and `namespace`, as the client routes
// it. Earlier calls sent back with their namespace are joined the same way.

/** A namespace and the functions it holds (the request's, kept with a stored turn for GET). */
export interface Namespace {
  name: string;
  functions: string[];
}

const SEPARATOR = "__";

export const flatName = (namespace: string, name: string) => `${namespace}${SEPARATOR}${name}`;

/** A called tool's name as the client declared it: split back when it is a namespaced function. */
export function declaredName(toolName: string, namespaces: readonly Namespace[] | undefined): { name: string; namespace?: string } {
  for (const namespace of namespaces ?? []) {
    const prefix = namespace.name + SEPARATOR;
    if (toolName.startsWith(prefix) && namespace.functions.includes(toolName.slice(prefix.length))) {
      return { name: toolName.slice(prefix.length), namespace: namespace.name };
    }
  }
  return { name: toolName };
}
