// The simulator lists response_format among its parameters, so it answers in
// JSON when asked: `{"reply": ...}` for a JSON object, and the simplest value
// of a JSON Schema, which the official SDK's structured-output parser accepts.
import OpenAI from "openai";
import { zodResponseFormat } from "openai/helpers/zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { jsonReply } from "../../../../core/providers/simulator/json-reply.ts";
import { ResponseFormat_Type } from "../../../../gen/router/v1/inference_pb.js";
import { startGateway, TEST_KEY, testConfig, type Gateway } from "../../../support/harness.ts";

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

  it("counts a JSON answer in pieces: max_tokens cuts it (finish length) and usage counts its pieces", async () => {
    const completion = await client.chat.completions.create({
      model: "simulator/echo",
      messages: [{ role: "user", content: "a fairly long sentence to answer" }],
      response_format: { type: "json_object" },
      max_tokens: 2,
    });
    expect(completion.choices[0].finish_reason).toBe("length");
    expect(completion.choices[0].message.content).toBe('{"reply":"You sa');
    expect(completion.usage?.completion_tokens).toBe(2);
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

  it("bounds what a caller's schema can make it build: values in all, array lengths, self-references", () => {
    // 60 properties each referring back to the whole: 60^8 values unbounded.
    const properties = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`p${i}`, { $ref: "#/$defs/fan" }]));
    const fan = jsonReply({ type: ResponseFormat_Type.JSON_SCHEMA, schema: { $ref: "#/$defs/fan", $defs: { fan: { type: "object", properties } } } } as never, "r")!;
    expect(fan.length).toBeLessThan(100_000);
    expect(schemaReply({ type: "array", minItems: 1e10, items: { type: "string" } })).toHaveLength(16);
    expect(schemaReply({ type: "array", minItems: -3 })).toEqual([]);
  });

  it("gives null for a type that is only null, an integer at or above its bounds, allOf's first, tuple items", () => {
    expect(schemaReply({ type: ["null"] })).toBeNull();
    expect(schemaReply({ type: "integer", minimum: 0.5 })).toBe(1);
    expect(schemaReply({ type: "integer", exclusiveMinimum: 0 })).toBe(1);
    expect(schemaReply({ allOf: [{ $ref: "#/$defs/o" }], $defs: { o: { type: "object", properties: { a: { type: "boolean" } } } } })).toEqual({ a: false });
    expect(schemaReply({ type: "array", prefixItems: [{ type: "string" }, { type: "number" }] })).toEqual(["r", 0]);
  });

  it("gives nothing for text", () => {
    expect(jsonReply(undefined, "r")).toBeUndefined();
    expect(jsonReply({ type: ResponseFormat_Type.TEXT } as never, "r")).toBeUndefined();
  });
});
