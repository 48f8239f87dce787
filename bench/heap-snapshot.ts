// Reading a V8 heap snapshot (.heapsnapshot JSON) for heap-diff.ts and
// heap-retainers.ts: nodes and edges as flat number arrays, as V8 writes them.
import { readFileSync } from "node:fs";

export interface HeapSnapshot {
  /** Values per node and per edge in the flat arrays. */
  nodeFields: number;
  edgeFields: number;
  nodes: number[];
  edges: number[];
  strings: string[];
  nodeTypes: string[];
  edgeTypes: string[];
  /** Offsets of a node's fields and of an edge's. */
  at: { type: number; name: number; selfSize: number; edgeCount: number; edgeType: number; edgeName: number; edgeTo: number };
}

export function readHeapSnapshot(file: string): HeapSnapshot {
  const heap = JSON.parse(readFileSync(file, "utf8")) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
    nodes: number[];
    edges: number[];
    strings: string[];
  };
  const { node_fields: nodeFields, edge_fields: edgeFields } = heap.snapshot.meta;
  return {
    nodeFields: nodeFields.length,
    edgeFields: edgeFields.length,
    nodes: heap.nodes,
    edges: heap.edges,
    strings: heap.strings,
    nodeTypes: heap.snapshot.meta.node_types[0],
    edgeTypes: heap.snapshot.meta.edge_types[0],
    at: {
      type: nodeFields.indexOf("type"),
      name: nodeFields.indexOf("name"),
      selfSize: nodeFields.indexOf("self_size"),
      edgeCount: nodeFields.indexOf("edge_count"),
      edgeType: edgeFields.indexOf("type"),
      edgeName: edgeFields.indexOf("name_or_index"),
      edgeTo: edgeFields.indexOf("to_node"),
    },
  };
}

/** `type name` of the node at this offset: closures named by their function, objects by their constructor; strings and numbers by their type alone. */
export function kindOf(heap: HeapSnapshot, node: number): string {
  const type = heap.nodeTypes[heap.nodes[node + heap.at.type]];
  if (type === "string" || type === "concatenated string" || type === "sliced string" || type === "number") return `${type} `;
  const name = heap.strings[heap.nodes[node + heap.at.name]];
  return `${type} ${name.length > 60 ? name.slice(0, 57) + "..." : name}`;
}

/** Count and self size per kind of object. */
export function tally(heap: HeapSnapshot): Map<string, { count: number; bytes: number }> {
  const byKind = new Map<string, { count: number; bytes: number }>();
  for (let node = 0; node < heap.nodes.length; node += heap.nodeFields) {
    const key = kindOf(heap, node);
    const entry = byKind.get(key) ?? { count: 0, bytes: 0 };
    entry.count += 1;
    entry.bytes += heap.nodes[node + heap.at.selfSize];
    byKind.set(key, entry);
  }
  return byKind;
}

/** Per stream, the kinds of object that grew from `idle` to `open`, the largest first. */
export function grownKinds(open: HeapSnapshot, idle: HeapSnapshot, streams: number): { key: string; count: number; bytes: number }[] {
  const [after, before] = [tally(open), tally(idle)];
  return [...after.entries()]
    .map(([key, value]) => {
      const was = before.get(key) ?? { count: 0, bytes: 0 };
      return { key, count: (value.count - was.count) / streams, bytes: (value.bytes - was.bytes) / streams };
    })
    .filter((row) => row.bytes > 0)
    .sort((a, b) => b.bytes - a.bytes);
}
