// Summarises a V8 .cpuprofile (from `--cpu-prof`) as markdown: where the busy
// time went, by area (our code, each package, Node internals, GC) and by
// function, self and inclusive. Used by `gateway-overhead.ts --profile`; also
// runs alone: `npx node bench/profile-summary.ts <file.cpuprofile> [requests]`.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const IDLE = new Set(["(idle)", "(root)"]);

export async function summarizeProfile(file: string, options: { root: string; top?: number; requests?: number }): Promise<string> {
  const profile = JSON.parse(await readFile(file, "utf8")) as CpuProfile;
  const top = options.top ?? 25;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }

  const where = (node: ProfileNode) => {
    const { url, lineNumber } = node.callFrame;
    if (!url) return "";
    let file = url.startsWith("file://") ? fileURLToPath(url) : url;
    if (file.startsWith(options.root + path.sep)) file = path.relative(options.root, file);
    const nodeModules = file.lastIndexOf("node_modules/");
    if (nodeModules > 0) file = file.slice(nodeModules);
    return `${file}:${lineNumber + 1}`;
  };
  const area = (node: ProfileNode) => {
    const { url, functionName } = node.callFrame;
    if (!url) return functionName.startsWith("(") ? functionName : "(native)";
    if (url.startsWith("node:")) return "node: internals";
    const file = url.startsWith("file://") ? fileURLToPath(url) : url;
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
    if (pkg) return pkg[1];
    if (file.startsWith(options.root + path.sep)) return path.relative(options.root, file).split(path.sep).slice(0, 2).join("/");
    return "(other)";
  };
  const key = (node: ProfileNode) => `${node.callFrame.functionName || "(anonymous)"} ${where(node)}`;

  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const areas = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    const node = byId.get(profile.samples[i]);
    if (!node) continue;
    if (IDLE.has(node.callFrame.functionName)) {
      idle += delta;
      continue;
    }
    busy += delta;
    self.set(key(node), (self.get(key(node)) ?? 0) + delta);
    areas.set(area(node), (areas.get(area(node)) ?? 0) + delta);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)!;
      if (IDLE.has(frame.callFrame.functionName)) continue;
      const k = key(frame);
      if (seen.has(k)) continue;
      seen.add(k);
      inclusive.set(k, (inclusive.get(k) ?? 0) + delta);
    }
  }

  const perRequest = (micros: number) => (options.requests ? ` | ${(micros / options.requests).toFixed(1)}` : "");
  const perRequestHead = options.requests ? " | µs/req" : "";
  const perRequestRule = options.requests ? " | ---:" : "";
  const pct = (micros: number) => ((100 * micros) / busy).toFixed(1);
  const rows = (map: Map<string, number>, n: number) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, micros]) => `| ${name.replaceAll("|", "\\|")} | ${pct(micros)}${perRequest(micros)} |`);

  const lines = [
    `## Gateway CPU profile`,
    "",
    `${path.basename(file)}: busy ${(busy / 1e6).toFixed(2)} s, idle ${(idle / 1e6).toFixed(2)} s` +
      (options.requests ? `, ${options.requests} requests served (µs/req = busy time spread over all of them, start-up included)` : "") +
      ". Percentages are of busy time.",
    "",
    `### By area (self time)`,
    "",
    `| area | % busy${perRequestHead} |`,
    `| --- | ---:${perRequestRule} |`,
    ...rows(areas, 20),
    "",
    `### Top functions by self time`,
    "",
    `| function | % busy${perRequestHead} |`,
    `| --- | ---:${perRequestRule} |`,
    ...rows(self, top),
    "",
    `### Project functions by inclusive time`,
    "",
    `| function | % busy${perRequestHead} |`,
    `| --- | ---:${perRequestRule} |`,
    ...rows(new Map([...inclusive].filter(([k]) => / (core|gateway|gen)\//.test(k))), top),
  ];
  return lines.join("\n");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const [file, requests] = process.argv.slice(2);
  if (!file) {
    process.stderr.write("usage: npx node bench/profile-summary.ts <file.cpuprofile> [requests]\n");
    process.exit(1);
  }
  const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
  process.stdout.write((await summarizeProfile(file, { root, requests: requests ? Number(requests) : undefined })) + "\n");
}
