// Selection time (`npm run bench -- --suite selection`): how long selectModel
// (core/selection) takes on a 2,000-token prompt, against a floor: reading the
// prompt's text once (every character code, one pass), and with the time of
// classification alone beside it. In process, no HTTP:
// what router/auto adds to a request before routing. Target: under 1 ms.
//
// Prompts: exactly 2,000 tokens (gpt-tokenizer, o200k) cut from the labelled
// set's long texts (test/selection/long/): TypeScript code, an English
// document, and Chinese and French text. The bundled catalogue with every
// provider's key present (as scripts/eval-selection.ts), configured preference.
//
// Options: --runs N (timed calls per prompt, 20000, split over --rounds N, 5),
// --warmup N (5000), --quick (2000 and 500). Markdown to stdout and bench/results/selection.md.
import { readFileSync, writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { create } from "@bufbuild/protobuf";
import { decode, encode } from "gpt-tokenizer";
import { MessageSchema, Role, type Message } from "../gen/router/v1/inference_pb.js";
import { classifyPrompt } from "../core/selection/classify.ts";
import { promptText, selectModel } from "../core/selection/select.ts";
import { bundledCatalogue } from "../scripts/selection-eval/evaluate.ts";
import { LABELLED_SET_DIR } from "../scripts/selection-eval/labelled-set.ts";
import { int, requireNode24 } from "./options.ts";

requireNode24("npm run bench -- --suite selection", "bench/selection-time.ts");

const PROMPT_TOKENS = 2000;

const { values: flags } = parseArgs({
  options: { runs: { type: "string" }, rounds: { type: "string" }, warmup: { type: "string" }, quick: { type: "boolean", default: false } },
});
const runs = int(flags.runs, flags.quick ? 2000 : 20_000);
const rounds = int(flags.rounds, 5);
const warmup = int(flags.warmup, flags.quick ? 500 : 5000);

const long = (name: string) => readFileSync(`${LABELLED_SET_DIR}long/${name}`, "utf8");
/** The first PROMPT_TOKENS tokens of `text` (repeated if it is shorter). */
function cut(text: string): string {
  let tokens = encode(text);
  while (tokens.length < PROMPT_TOKENS) tokens = [...tokens, ...encode("\n\n" + text)];
  return decode(tokens.slice(0, PROMPT_TOKENS));
}
const userMessage = (text: string): Message => create(MessageSchema, { role: Role.USER, content: [{ part: { case: "text", value: { text } } }] });

const prompts = [
  { name: "code (TypeScript review)", text: cut("Review this module and fix its race condition.\n\n" + long("quota-ledger.ts.txt")) },
  { name: "document (English, summarise)", text: cut("Summarise this review for the executive team.\n\n" + long("incident-report.md") + "\n\n" + long("rapport-association.md")) },
  { name: "Chinese and French text", text: cut("请总结以下内容。\n\n" + long("huiyi-jiyao.md") + "\n\n" + long("rapport-association.md")) },
];

const catalogue = bundledCatalogue();

/** Nanoseconds of each of `n` calls of `work`. */
function time(n: number, work: () => unknown): Float64Array {
  const samples = new Float64Array(n);
  let sink = 0;
  for (let i = 0; i < n; i++) {
    const start = process.hrtime.bigint();
    const result = work();
    samples[i] = Number(process.hrtime.bigint() - start);
    if (result) sink++;
  }
  if (sink < 0) console.log(sink); // keeps the results alive
  return samples.sort();
}

const quantile = (sorted: Float64Array, q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const ms = (ns: number) => (ns / 1e6).toFixed(3);

/** The floor: the prompt's text gathered from the messages and each character read once. */
function readOnce(messages: Message[]): number {
  const text = promptText(messages);
  let sum = 0;
  for (let i = 0; i < text.length; i++) sum = (sum + text.charCodeAt(i)) | 0;
  return sum | 1;
}

/** The prompts' workloads: the whole selection, classification alone (the part that reads the text: where the time goes), and the floor. */
const workloads = prompts.map((prompt) => {
  const messages = [userMessage(prompt.text)];
  return {
    prompt,
    messages,
    select: () => selectModel({ messages }, catalogue).selectedModel,
    classify: () => classifyPrompt(promptText(messages)).tags.length,
    floor: () => readOnce(messages),
  };
});
for (const w of workloads) for (const work of [w.select, w.classify, w.floor]) time(warmup, work);

// Interleaved rounds: a neighbour's burst on this shared machine lands in one
// round's tail, so each round's p99 is kept beside the pooled one.
type Kind = "select" | "classify" | "floor";
const samples = workloads.map(() => ({ select: [] as Float64Array[], classify: [] as Float64Array[], floor: [] as Float64Array[] }));
const perRound = Math.max(1, Math.floor(runs / rounds));
for (let round = 0; round < rounds; round++) {
  workloads.forEach((w, i) => {
    for (const kind of ["select", "classify", "floor"] as Kind[]) samples[i][kind].push(time(perRound, w[kind]));
  });
  process.stderr.write(`round ${round + 1}/${rounds} done\n`);
}
const pooled = (parts: Float64Array[]) => Float64Array.from(parts.flatMap((part) => [...part])).sort();
const quietestP99 = (parts: Float64Array[]) => Math.min(...parts.map((part) => quantile(part, 0.99)));

const rows = workloads.map((w, i) => {
  const selection = pooled(samples[i].select);
  const reading = pooled(samples[i].floor);
  const picked = selectModel({ messages: w.messages }, catalogue);
  return `| ${w.prompt.name} | ${w.prompt.text.length} | ${ms(quantile(selection, 0.5))} | ${ms(quantile(selection, 0.99))} | ${ms(quietestP99(samples[i].select))} | ${ms(quantile(pooled(samples[i].classify), 0.5))} | ${ms(quantile(reading, 0.5))} | ${ms(quantile(reading, 0.99))} | ${picked.assignedTags.join(", ")}; ${picked.difficulty}; ${picked.selectedModel || picked.error} |`;
});

const report = [
  `Selection time on a ${PROMPT_TOKENS}-token prompt: ${rounds} rounds of ${perRound} timed calls per prompt after ${warmup} warm-up calls; Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "CPU"}, load average ${loadavg()[0].toFixed(2)} at the end; ${catalogue.models.length} catalogue models.`,
  "",
  "| prompt | characters | selectModel p50 (ms) | selectModel p99 (ms) | p99 of the quietest round (ms) | classify alone p50 (ms) | read once p50 (ms) | read once p99 (ms) | selection |",
  "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
  ...rows,
  "",
].join("\n");
process.stdout.write(report);
writeFileSync(new URL("./results/selection.md", import.meta.url), report);
