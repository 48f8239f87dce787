// The simulator lists response_format among its parameters, so it answers in
// JSON when asked: `{"reply": ...}` for a JSON object, and the simplest value
// of a JSON Schema, which the official SDK's structured-output parser accepts.
import OpenAI from "openai";
import { zodResponseFormat } from "openai/helpers/zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { jsonReply } from "../../core/providers/simulator/json-reply.ts";
import { ResponseFormat_Type } from "../../gen/router/v1/inference_pb.js";
import { startGateway, TEST_KEY, testConfig, type Gateway } from "../support/harness.ts";

describe("the simulator's JSON answers through the openai SDK", () => {
  let gateway: Gateway;
  let client: OpenAI;
  beforeAll(async () => {
    // No upstream is called: only the simulator answers here.
    gateway = await startGateway(testConfig("http://127.0.0.1:9"));
    client = new OpenAI({ apiKey: TEST_KEY, baseURL: gateway.apiUrl, maxRetries: 0 });
  });
  afterAll(() => gateway?.close());

  const Weather = z.object({ city: z.string(), celsius: z.number(), windy: z.boolean(), tags: z.array(z.string()), unit: z.enum(["C", "F"]) });

  it("parses a json_schema answer with the SDK's parser", async () => {
    const completion = await client.chat.completions.parse({
      model: "simulator/echo",
      messages: [{ role: "user", content: "weather in Paris" }],
      response_format: zodResponseFormat(Weather, "weather"),
    });
    expect(completion.choices[0].message.parsed).toEqual({ city: "You said: weather in Paris", celsius: 0, windy: false, tags: [], unit: "C" });
  });

  it("streams a json_object answer whose text is JSON", async () => {
    const stream = await client.chat.completions.create({
      model: "simulator/echo",
      messages: [{ role: "user", content: "hi there" }],
      response_format: { type: "json_object" },
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(JSON.parse(text)).toEqual({ reply: "You said: hi there" });
  });

  it("answers text when no JSON is asked", async () => {
    const completion = await client.chat.completions.create({ model: "simulator/echo", messages: [{ role: "user", content: "plain" }] });
    expect(completion.choices[0].message.content).toBe("You said: plain");
  });
});

describe("jsonReply", () => {
  const schemaReply = (schema: object) => JSON.parse(jsonReply({ type: ResponseFormat_Type.JSON_SCHEMA, schema } as never, "r")!);

  it("follows local references, minimums, required lengths, nullable types and the first choice", () => {
    expect(
      schemaReply({
        type: "object",
        properties: {
          item: { $ref: "#/$defs/item" },
          count: { type: "integer", minimum: 2 },
          pair: { type: "array", minItems: 2, items: { type: "boolean" } },
          maybe: { type: ["null", "number"] },
          either: { anyOf: [{ type: "string" }, { type: "number" }] },
          fixed: { const: 7 },
        },
        $defs: { item: { type: "object", properties: { name: { type: "string" } } } },
      }),
    ).toEqual({ item: { name: "r" }, count: 2, pair: [false, false], maybe: 0, either: "r", fixed: 7 });
  });

  it("stops a schema that refers to itself at a bounded depth", () => {
    const value = schemaReply({ $ref: "#/$defs/node", $defs: { node: { type: "object", properties: { next: { $ref: "#/$defs/node" } } } } });
    let depth = 0;
    for (let node = value; node && typeof node === "object"; node = node.next) depth++;
    expect(depth).toBeGreaterThan(1);
    expect(depth).toBeLessThanOrEqual(8);
  });

  it("gives nothing for text", () => {
    expect(jsonReply(undefined, "r")).toBeUndefined();
    expect(jsonReply({ type: ResponseFormat_Type.TEXT } as never, "r")).toBeUndefined();
  });
});
