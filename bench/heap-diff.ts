// What every open stream keeps alive, by kind of object: the difference of two
// V8 heap snapshots of one process (taken with all streams open, and idle
// after), per stream. `npx node bench/heap-diff.ts <open.heapsnapshot>
// <idle.heapsnapshot> [streams=1000] [rows=40]`; streams.ts --heap-snapshot
// writes both for the floor and each gateway.
import { readFileSync } from "node:fs";

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Count and self size per `type name` (closures named by their function, objects by their constructor). */
function tally(file: string): Map<string, { count: number; bytes: number }> {
  const heap = JSON.parse(readFileSync(file, "utf8")) as Snapshot;
  const fields = heap.snapshot.meta.node_fields;
  const types = heap.snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = [fields.indexOf("type"), fields.indexOf("name"), fields.indexOf("self_size")];
  const byKind = new Map<string, { count: number; bytes: number }>();
  for (let node = 0; node < heap.nodes.length; node += fields.length) {
    const type = types[heap.nodes[node + typeAt]];
    // Strings and numbers are named by their content: one row per type.
    const name = type === "string" || type === "concatenated string" || type === "sliced string" || type === "number" ? "" : heap.strings[heap.nodes[node + nameAt]];
    const key = `${type} ${name.length > 60 ? name.slice(0, 57) + "..." : name}`;
    const entry = byKind.get(key) ?? { count: 0, bytes: 0 };
    entry.count += 1;
    entry.bytes += heap.nodes[node + sizeAt];
    byKind.set(key, entry);
  }
  return byKind;
}

const [openFile, idleFile, streamsArg = "1000", rowsArg = "40"] = process.argv.slice(2);
if (!openFile || !idleFile) {
  console.error("usage: node bench/heap-diff.ts <open.heapsnapshot> <idle.heapsnapshot> [streams] [rows]");
  process.exit(2);
}
const streams = Number(streamsArg);
const [open, idle] = [tally(openFile), tally(idleFile)];
const rows = [...open.entries()]
  .map(([key, value]) => {
    const before = idle.get(key) ?? { count: 0, bytes: 0 };
    return { key, count: (value.count - before.count) / streams, bytes: (value.bytes - before.bytes) / streams };
  })
  .filter((row) => row.bytes > 0)
  .sort((a, b) => b.bytes - a.bytes);
const total = rows.reduce((sum, row) => ({ count: sum.count + row.count, bytes: sum.bytes + row.bytes }), { count: 0, bytes: 0 });
console.log(`per stream: ${total.count.toFixed(0)} objects, ${(total.bytes / 1024).toFixed(1)} KiB (rows that grew)`);
console.log("| kind | objects per stream | bytes per stream |\n| --- | ---: | ---: |");
for (const row of rows.slice(0, Number(rowsArg))) console.log(`| ${row.key.replace(/\|/g, "\\|")} | ${row.count.toFixed(2)} | ${row.bytes.toFixed(0)} |`);
