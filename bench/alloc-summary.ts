// Summarises an allocation profile (the streams suite's --alloc-profile: V8's
// sampling heap profiler, collected objects included) as markdown: the bytes
// allocated per stream by each function, and by each function with its caller.
// `npx node bench/alloc-summary.ts <file.heapprofile> <streams served> [rows]`
import { readFile } from "node:fs/promises";

interface AllocationNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: AllocationNode[];
}

const [file, streamsArgument, rowsArgument] = process.argv.slice(2);
if (!file || !streamsArgument) {
  console.error("usage: npx node bench/alloc-summary.ts <file.heapprofile> <streams served> [rows]");
  process.exit(2);
}
const streams = Number(streamsArgument);
const rows = Number(rowsArgument ?? 25);
const { head } = JSON.parse(await readFile(file, "utf8")) as { head: AllocationNode };

const bySite = new Map<string, number>();
const bySiteAndCaller = new Map<string, number>();
let total = 0;
const siteOf = ({ functionName, url, lineNumber }: AllocationNode["callFrame"]) =>
  `${functionName || "(anonymous)"} ${url.replace(/^file:\/\//, "").replace(`${process.cwd()}/`, "")}:${lineNumber + 1}`;
const walk = (node: AllocationNode, caller: string) => {
  const site = siteOf(node.callFrame);
  if (node.selfSize > 0) {
    total += node.selfSize;
    bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
    const pair = `${site} ← ${caller}`;
    bySiteAndCaller.set(pair, (bySiteAndCaller.get(pair) ?? 0) + node.selfSize);
  }
  for (const child of node.children) walk(child, site);
};
walk(head, "(root)");

const table = (title: string, entries: Map<string, number>) => [
  `| ${title} | bytes per stream |`,
  "| --- | ---: |",
  ...[...entries].sort((a, b) => b[1] - a[1]).slice(0, rows).map(([site, bytes]) => `| ${site} | ${Math.round(bytes / streams)} |`),
];
console.log(
  [
    `${file}: ${(total / streams / 1024).toFixed(1)} KiB allocated per stream (sampled every 16 KiB; start-up included)`,
    "",
    ...table("function", bySite),
    "",
    ...table("function ← caller", bySiteAndCaller),
  ].join("\n"),
);
