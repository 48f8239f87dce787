// The CPU of the native Messages-to-Anthropic request path without HTTP
// (`npx node bench/native-messages-cost.ts [--root DIR] [--rounds N]`): the
// Messages decoder and the Anthropic converter on one body with a base64
// image, a plain-text document, tool_use and tool_result blocks. A
// diagnostic, not part of `npm run bench`: compare checkouts (A/B, several
// runs in both orders), not absolute numbers.
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const { values: flags } = parseArgs({
  options: {
    root: { type: "string", default: path.dirname(path.dirname(new URL(import.meta.url).pathname)) },
    rounds: { type: "string", default: "20000" },
  },
});
const root = path.resolve(flags.root);
const rounds = Number(flags.rounds);
const load = (file: string) => import(pathToFileURL(path.join(root, file)).href);

const { decodeMessagesRequest } = await load("gateway/formats/messages/decode-request.ts");
const { convertRequest } = await load("core/providers/anthropic/convert-request.ts");

const image = Buffer.alloc(48 * 1024, 7).toString("base64");
const documentText = "A plain text document. ".repeat(2000);
const body = {
  model: "claude-x",
  max_tokens: 1024,
  system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
  tools: [{ name: "lookup", description: "Looks up", input_schema: { type: "object", properties: { q: { type: "string" } } } }],
  messages: [
    {
      role: "user",
      content: [
        { type: "image", source: { type: "base64", media_type: "image/png", data: image } },
        { type: "document", source: { type: "text", media_type: "text/plain", data: documentText } },
        { type: "text", text: "What do these say?" },
      ],
    },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "lookup", input: { q: "x", nested: { list: [1, 2, 3], deep: { a: "b" } } } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "found" }] }] },
  ],
};
const route = { provider_model_id: "claude-x" };
const call = (request: unknown) => ({ request, provider: {}, route, apiKey: "k", stream: true, maxCompletionTokens: 4096, signal: new AbortController().signal });
const once = () => convertRequest(call(decodeMessagesRequest(body, { apiKey: "k", requestId: "r", betas: [] }).request)).body;

const sent = JSON.stringify(once());
for (let i = 0; i < rounds / 10; i++) once();
const start = process.cpuUsage();
for (let i = 0; i < rounds; i++) once();
const used = process.cpuUsage(start);
const micros = (used.user + used.system) / rounds;
console.log(`${root}: ${micros.toFixed(1)} us CPU per request (${rounds} rounds), body ${sent.length} bytes, sha ${(await import("node:crypto")).createHash("sha256").update(sent).digest("hex").slice(0, 12)}`);
