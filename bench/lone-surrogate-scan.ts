// Diagnostic (not part of `npm run bench`): what the lone-surrogate rule costs a
// request body and a stored record (wire/well-formed.ts), beside JSON.parse of
// the same text. `scan` is mayHoldLoneSurrogate on the text, what every body and
// record pays; `walk` is makeWellFormed over the parsed value, what only a text
// the scan flags pays. Chat bodies of about 2 KB and 200 KB, as a JavaScript
// client writes them (astral characters raw) and as Python's json.dumps does
// (every emoji as an escaped surrogate pair). Best of 60 rounds, in ns per body.
//   npx node bench/lone-surrogate-scan.ts
import { makeWellFormed, mayHoldLoneSurrogate } from "../wire/well-formed.ts";

function chatBody(targetBytes: number, escapedPairs: boolean): string {
  const messages: unknown[] = [{ role: "system", content: "You are a helpful assistant.\nAnswer briefly and precisely." }];
  for (let i = 0; JSON.stringify({ model: "openai/gpt-4o", messages }).length < targetBytes; i++) {
    const emoji = escapedPairs ? " \u{1F600}" : "";
    messages.push({ role: i % 2 ? "assistant" : "user", content: `Message ${i}: please summarise this paragraph about routing, fallbacks and costs${emoji}.\n` });
  }
  const body = JSON.stringify({ model: "openai/gpt-4o", messages, temperature: 0.7, max_tokens: 512 });
  return escapedPairs ? body.replace(/\u{1F600}/gu, "\\ud83d\\ude00") : body;
}

/** The best time of one call, in ns, over rounds of `iterations` calls. */
function nanoseconds(work: () => unknown, iterations: number): number {
  for (let i = 0; i < iterations; i++) work();
  let best = Infinity;
  for (let round = 0; round < 60; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) work();
    best = Math.min(best, Number(process.hrtime.bigint() - start) / iterations);
  }
  return Math.round(best);
}

const bodies: [string, string][] = [
  ["2 KB, JavaScript client", chatBody(2_000, false)],
  ["200 KB, JavaScript client", chatBody(200_000, false)],
  ["2 KB, emoji as escaped pairs", chatBody(2_000, true)],
  ["200 KB, emoji as escaped pairs", chatBody(200_000, true)],
];
console.table(
  bodies.map(([body, text]) => {
    const iterations = text.length > 10_000 ? 50 : 5_000;
    const parsed = JSON.parse(text);
    return {
      body,
      "JSON.parse": nanoseconds(() => JSON.parse(text), iterations),
      scan: nanoseconds(() => mayHoldLoneSurrogate(text), iterations),
      flagged: mayHoldLoneSurrogate(text),
      "walk (skipped when not flagged)": nanoseconds(() => makeWellFormed(parsed), iterations),
    };
  }),
);
