// What every open stream keeps alive, by kind of object: the difference of two
// V8 heap snapshots of one process (taken with all streams open, and idle
// after), per stream. `npx node bench/heap-diff.ts <open.heapsnapshot>
// <idle.heapsnapshot> [streams=1000] [rows=40]`; streams.ts --heap-snapshot
// writes both for the floor and each gateway. heap-retainers.ts tells what
// keeps them.
import { grownKinds, readHeapSnapshot } from "./heap-snapshot.ts";

const [openFile, idleFile, streamsArg = "1000", rowsArg = "40"] = process.argv.slice(2);
if (!openFile || !idleFile) {
  console.error("usage: node bench/heap-diff.ts <open.heapsnapshot> <idle.heapsnapshot> [streams] [rows]");
  process.exit(2);
}
const rows = grownKinds(readHeapSnapshot(openFile), readHeapSnapshot(idleFile), Number(streamsArg));
const total = rows.reduce((sum, row) => ({ count: sum.count + row.count, bytes: sum.bytes + row.bytes }), { count: 0, bytes: 0 });
console.log(`per stream: ${total.count.toFixed(0)} objects, ${(total.bytes / 1024).toFixed(1)} KiB (rows that grew)`);
console.log("| kind | objects per stream | bytes per stream |\n| --- | ---: | ---: |");
for (const row of rows.slice(0, Number(rowsArg))) console.log(`| ${row.key.replace(/\|/g, "\\|")} | ${row.count.toFixed(2)} | ${row.bytes.toFixed(0)} |`);
