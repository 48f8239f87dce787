// What keeps each open stream's objects alive: for every kind of object that
// grew from the idle snapshot to the open one (heap-diff.ts), its most common
// retainer paths in the open snapshot, per stream. A path is the chain of
// retainers on the shortest path from the GC roots, nearest first, each step
// written `kind .edge` (the edge of that retainer that holds the step before).
// `npx node bench/heap-retainers.ts <open.heapsnapshot> <idle.heapsnapshot>
// [--streams 1000] [--kinds 15] [--paths 6] [--depth 6] [--kind "object Object"]... [--owner KIND]...`
// With `--owner KIND` (repeatable) it prints instead what the objects of that
// kind hold, per stream: the tree of shortest retainer paths below them, by
// edge, with the objects and bytes under each (`--depth` levels).
import { parseArgs } from "node:util";
import { grownKinds, kindOf, readHeapSnapshot, type HeapSnapshot } from "./heap-snapshot.ts";

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    streams: { type: "string", default: "1000" },
    kinds: { type: "string", default: "15" },
    paths: { type: "string", default: "6" },
    depth: { type: "string", default: "6" },
    kind: { type: "string", multiple: true },
    owner: { type: "string", multiple: true },
  },
});
const [openFile, idleFile] = positionals;
if (!openFile || !idleFile) {
  console.error("usage: node bench/heap-retainers.ts <open.heapsnapshot> <idle.heapsnapshot> [--streams N] [--kinds N] [--paths N] [--depth N] [--kind K]... [--owner K]...");
  process.exit(2);
}
const streams = Number(flags.streams);
const open = readHeapSnapshot(openFile);
const grown = grownKinds(open, readHeapSnapshot(idleFile), streams);
const wanted = flags.kind ?? grown.slice(0, Number(flags.kinds)).map((row) => row.key);

/** For each node (by ordinal), the retainer and edge that first reach it from the root, breadth first; weak edges do not retain. */
function shortestRetainers(heap: HeapSnapshot): { parent: Int32Array; via: Int32Array; order: Int32Array } {
  const count = heap.nodes.length / heap.nodeFields;
  const firstEdge = new Int32Array(count + 1);
  for (let i = 0; i < count; i++) firstEdge[i + 1] = firstEdge[i] + heap.nodes[i * heap.nodeFields + heap.at.edgeCount] * heap.edgeFields;
  const parent = new Int32Array(count).fill(-1);
  const via = new Int32Array(count).fill(-1);
  const weak = heap.edgeTypes.indexOf("weak");
  const queue = new Int32Array(count);
  let [head, tail] = [0, 1];
  parent[0] = 0;
  while (head < tail) {
    const from = queue[head++];
    for (let edge = firstEdge[from]; edge < firstEdge[from + 1]; edge += heap.edgeFields) {
      if (heap.edges[edge + heap.at.edgeType] === weak) continue;
      const to = heap.edges[edge + heap.at.edgeTo] / heap.nodeFields;
      if (parent[to] !== -1) continue;
      parent[to] = from;
      via[to] = edge;
      queue[tail++] = to;
    }
  }
  return { parent, via, order: queue.subarray(0, tail) };
}

/** An edge's name as a path step: property and variable names as they are, indexes as []. */
function edgeLabel(heap: HeapSnapshot, edge: number): string {
  const type = heap.edgeTypes[heap.edges[edge + heap.at.edgeType]];
  const name = heap.edges[edge + heap.at.edgeName];
  if (type === "element" || type === "hidden") return "[]";
  return heap.strings[name] ?? String(name);
}

const { parent, via, order } = shortestRetainers(open);
const depth = Number(flags.depth);
if (flags.owner) {
  printOwners(flags.owner);
  process.exit(0);
}
const pathsByKind = new Map<string, Map<string, number>>(wanted.map((kind) => [kind, new Map()]));
for (let ordinal = 0; ordinal < parent.length; ordinal++) {
  const paths = pathsByKind.get(kindOf(open, ordinal * open.nodeFields));
  if (!paths || parent[ordinal] === -1) continue;
  const steps: string[] = [];
  for (let node = ordinal, step = 0; step < depth && node !== 0; step++, node = parent[node]) {
    steps.push(`${kindOf(open, parent[node] * open.nodeFields).trim()} .${edgeLabel(open, via[node])}`);
  }
  const key = steps.join(" ← ");
  paths.set(key, (paths.get(key) ?? 0) + 1);
}

for (const kind of wanted) {
  const row = grown.find((r) => r.key === kind);
  console.log(`\n## ${kind}: ${row ? `${row.count.toFixed(1)} objects, ${row.bytes.toFixed(0)} bytes per stream` : "did not grow"}`);
  const top = [...pathsByKind.get(kind)!.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(flags.paths));
  for (const [path, count] of top) console.log(`${(count / streams).toFixed(2).padStart(7)}  ${path}`);
}

/** What the objects of each kind hold through the shortest-path tree: objects and bytes per stream under each edge, `depth` levels down. */
function printOwners(kinds: string[]): void {
  // Objects and bytes under each node of the tree, itself included: leaves first.
  const objects = new Float64Array(parent.length).fill(1);
  const bytes = new Float64Array(parent.length);
  for (let ordinal = 0; ordinal < parent.length; ordinal++) bytes[ordinal] = open.nodes[ordinal * open.nodeFields + open.at.selfSize];
  const children: number[][] = Array.from({ length: parent.length }, () => []);
  for (let i = order.length - 1; i > 0; i--) {
    const node = order[i];
    objects[parent[node]] += objects[node];
    bytes[parent[node]] += bytes[node];
    children[parent[node]].push(node);
  }
  for (const kind of kinds) {
    const roots = [...order].filter((node) => kindOf(open, node * open.nodeFields) === kind);
    const total = roots.reduce((sum, node) => ({ objects: sum.objects + objects[node], bytes: sum.bytes + bytes[node] }), { objects: 0, bytes: 0 });
    console.log(`\n## ${kind}: ${(roots.length / streams).toFixed(2)} per stream, holding ${(total.objects / streams).toFixed(1)} objects, ${(total.bytes / streams).toFixed(0)} bytes per stream`);
    printLevel(roots, 1);
  }

  function printLevel(nodes: number[], level: number): void {
    const byEdge = new Map<string, { nodes: number[]; objects: number; bytes: number }>();
    for (const node of nodes) {
      for (const child of children[node]) {
        const key = `.${edgeLabel(open, via[child])} ${kindOf(open, child * open.nodeFields).trim()}`;
        const entry = byEdge.get(key) ?? { nodes: [], objects: 0, bytes: 0 };
        entry.nodes.push(child);
        entry.objects += objects[child];
        entry.bytes += bytes[child];
        byEdge.set(key, entry);
      }
    }
    const rows = [...byEdge.entries()].filter(([, e]) => e.objects / streams >= 1).sort((a, b) => b[1].bytes - a[1].bytes);
    for (const [key, entry] of rows) {
      console.log(`${"  ".repeat(level)}${key}: ${(entry.objects / streams).toFixed(1)} objects, ${(entry.bytes / streams).toFixed(0)} bytes`);
      if (level < depth) printLevel(entry.nodes, level + 1);
    }
  }
}
