// The core server as an internal service sees it: a plain @grpc/grpc-js client
// (with the generated protobuf-es schemas as serializers), and `buf curl`
// calling it schema-less through server reflection.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { create, fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { anyUnpack, AnySchema } from "@bufbuild/protobuf/wkt";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import * as grpc from "@grpc/grpc-js";
import { createCore, type Core } from "../../../core/create-core.ts";
import { createCoreServer, type CoreServer } from "../../../core/server.ts";
import {
  GetModelRequestSchema,
  GetModelResponseSchema,
  ListModelsRequestSchema,
  ListModelsResponseSchema,
  type GetModelResponse,
  type ListModelsResponse,
} from "../../../gen/router/v1/catalogue_pb.js";
import { ErrorDetailSchema, type ErrorDetail } from "../../../gen/router/v1/errors_pb.js";
import {
  BlockType,
  FinishReason,
  GenerateRequestSchema,
  GenerateResponseSchema,
  Role,
  type GenerateResponse,
} from "../../../gen/router/v1/inference_pb.js";
import { bufCurl, grpcMethod, rejection } from "../../support/grpc-js.ts";
import { DISABLED_KEY, TEST_ENV, TEST_KEY, testConfig } from "../../support/harness.ts";

const CatalogueClient = grpc.makeGenericClientConstructor(
  {
    ListModels: grpcMethod("/router.v1.CatalogueService/ListModels", ListModelsRequestSchema, ListModelsResponseSchema),
    GetModel: grpcMethod("/router.v1.CatalogueService/GetModel", GetModelRequestSchema, GetModelResponseSchema),
  },
  "CatalogueService",
);

const InferenceClient = grpc.makeGenericClientConstructor(
  { Generate: grpcMethod("/router.v1.InferenceService/Generate", GenerateRequestSchema, GenerateResponseSchema, true) },
  "InferenceService",
);

type UnaryCall<Req, Res> = (request: Req, callback: (error: grpc.ServiceError | null, response: Res) => void) => grpc.ClientUnaryCall;

function unary<Req, Res>(client: grpc.Client, name: string, request: Req): Promise<Res> {
  const call = (client as unknown as Record<string, UnaryCall<Req, Res>>)[name].bind(client);
  return new Promise((resolve, reject) => call(request, (error, response) => (error ? reject(error) : resolve(response))));
}

/** All events of one Generate call (rejects with the grpc-js ServiceError on failure). */
async function generate(client: grpc.Client, request: MessageInitShape<typeof GenerateRequestSchema>): Promise<GenerateResponse[]> {
  const start = (client as unknown as Record<string, (r: unknown) => grpc.ClientReadableStream<GenerateResponse>>).Generate.bind(client);
  const events: GenerateResponse[] = [];
  for await (const event of start(create(GenerateRequestSchema, request))) events.push(event as GenerateResponse);
  return events;
}

/**
 * The router's ErrorDetail from the gRPC trailer `grpc-status-details-bin`: a
 * google.rpc.Status (1: code, 2: message, 3: repeated Any details), read by hand.
 */
function errorDetailOf(error: grpc.ServiceError): { code: number; message: string; detail: ErrorDetail | undefined } {
  const [bytes] = error.metadata.get("grpc-status-details-bin");
  if (!(bytes instanceof Buffer)) throw new Error("no grpc-status-details-bin trailer");
  const reader = new BinaryReader(bytes);
  const status = { code: 0, message: "", detail: undefined as ErrorDetail | undefined };
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1 && wireType === WireType.Varint) status.code = reader.int32();
    else if (field === 2 && wireType === WireType.LengthDelimited) status.message = reader.string();
    else if (field === 3 && wireType === WireType.LengthDelimited) {
      const any = fromBinary(AnySchema, reader.bytes());
      status.detail ??= anyUnpack(any, ErrorDetailSchema);
    } else reader.skip(wireType);
  }
  return status;
}

const MODELS = testConfig("http://127.0.0.1:9/v1").models.map((m) => m.id);

let core: Core;
let server: CoreServer;
let address: string;
let catalogue: grpc.Client;
let inference: grpc.Client;

beforeAll(async () => {
  // No test here reaches an OpenAI-compatible upstream: the URL is never called.
  core = await createCore({ config: testConfig("http://127.0.0.1:9/v1"), env: TEST_ENV });
  server = await createCoreServer(core, { host: "127.0.0.1", port: 0 });
  address = server.url.replace(/^http:\/\//, "");
  catalogue = new CatalogueClient(address, grpc.credentials.createInsecure());
  inference = new InferenceClient(address, grpc.credentials.createInsecure());
});

afterAll(async () => {
  catalogue?.close();
  inference?.close();
  await server?.close();
  await core?.close();
});

const hello = (apiKey: string, model = "simulator/echo") => ({
  caller: { apiKey },
  model,
  messages: [{ role: Role.USER, content: [{ part: { case: "text" as const, value: { text: "hello there" } } }] }],
  stream: true,
});

describe("CatalogueService from a grpc-js client", () => {
  it("ListModels lists the test models", async () => {
    const response = await unary<unknown, ListModelsResponse>(catalogue, "ListModels", create(ListModelsRequestSchema));
    expect(response.models.map((m) => m.id)).toEqual(MODELS);
    const echo = response.models.find((m) => m.id === "simulator/echo")!;
    expect(echo).toMatchObject({
      name: "simulator/echo",
      created: 1700000000n,
      contextLength: 128000,
      isActive: true,
      creator: "simulator",
      pricing: { prompt: "0.0000001", completion: "0.000002" },
      topProvider: { contextLength: 128000, maxCompletionTokens: 4096 },
    });
    expect(response.models.find((m) => m.id === "test/unkeyed")?.isActive).toBe(false);
  });

  it("GetModel answers a model with its providers", async () => {
    const response = await unary<unknown, GetModelResponse>(catalogue, "GetModel", create(GetModelRequestSchema, { id: "test/ok" }));
    expect(response.model?.id).toBe("test/ok");
    expect(response.providerData.map((e) => [e.providerId, e.providerModelId, e.pricing?.prompt])).toEqual([
      ["cheap", "ok", "0.000001"],
      ["dear", "ok-dear", "0.000003"],
    ]);
  });

  it("GetModel of an unknown id is NOT_FOUND with the ErrorDetail in grpc-status-details-bin", async () => {
    const error = await rejection(unary(catalogue, "GetModel", create(GetModelRequestSchema, { id: "nobody/nothing" })));
    expect(error.code).toBe(grpc.status.NOT_FOUND);
    // Connect percent-encodes grpc-message with encodeURIComponent ("/" -> "%2F", allowed by the
    // gRPC spec) but grpc-js decodes it with decodeURI, which leaves "%2F" alone: undo that here.
    // The google.rpc.Status in grpc-status-details-bin carries the message unencoded.
    expect(decodeURIComponent(error.details)).toBe("Model nobody/nothing is not in the catalogue.");
    const status = errorDetailOf(error);
    expect(status.code).toBe(grpc.status.NOT_FOUND);
    expect(status.message).toBe("Model nobody/nothing is not in the catalogue.");
    expect(status.detail).toMatchObject({ reason: "model_not_found", param: "id", retryAfterSeconds: 0 });
  });
});

describe("InferenceService/Generate from a grpc-js client", () => {
  it("streams start, block events, usage with its cost, then finish", async () => {
    const events = await generate(inference, hello(TEST_KEY));
    const cases = events.map((e) => e.event.case);
    expect(cases[0]).toBe("start");
    expect(cases.slice(-2)).toEqual(["usage", "finish"]);
    expect(cases.slice(1, -2)).toEqual(["blockStart", ...cases.slice(2, -3).map(() => "blockDelta"), "blockStop"]);
    expect(cases.filter((c) => c === "blockDelta").length).toBeGreaterThan(1);

    const start = events[0].event.case === "start" ? events[0].event.value : undefined;
    expect(start).toMatchObject({ modelId: "simulator/echo", model: "echo", provider: "simulator", free: false });
    expect(start?.id).toMatch(/^rtr_/);
    expect(start?.created).toBeGreaterThan(0n);
    expect(start?.attempts).toEqual([expect.objectContaining({ modelId: "simulator/echo", provider: "simulator", outcome: "ok" })]);

    const blockStart = events[1].event.value;
    expect(blockStart).toMatchObject({ index: 0, type: BlockType.TEXT });
    const text = events.map((e) => (e.event.case === "blockDelta" ? e.event.value.text : "")).join("");
    expect(text).toBe("You said: hello there");

    const usage = events.at(-2)!.event.case === "usage" ? events.at(-2)!.event.value : undefined;
    // 3 per message + 2 words in; 4 words out; at 0.0000001 in and 0.000002 out.
    expect(usage).toMatchObject({ inputTokens: 5, outputTokens: 4, cachedInputTokens: 0, reasoningTokens: 0, cost: "0.0000085" });
    expect(events.at(-1)!.event).toEqual({
      case: "finish",
      value: expect.objectContaining({ reason: FinishReason.STOP, rawReason: "stop" }),
    });
  });

  it("honours the request id and the sampling limits", async () => {
    const events = await generate(inference, { ...hello(TEST_KEY), requestId: "rtr_fixed", sampling: { maxTokens: 2 } });
    expect(events[0].event).toMatchObject({ case: "start", value: { id: "rtr_fixed" } });
    expect(events.at(-1)!.event).toMatchObject({ case: "finish", value: { reason: FinishReason.LENGTH } });
  });

  it.each([
    ["a wrong key", "sk-wrong", "invalid_api_key"],
    ["no key", "", "missing_api_key"],
    ["a disabled key", DISABLED_KEY, "key_disabled"],
  ])("answers %s with UNAUTHENTICATED and its reason", async (_name, apiKey, reason) => {
    const error = await rejection(generate(inference, hello(apiKey)));
    expect(error.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(errorDetailOf(error).detail?.reason).toBe(reason);
  });

  it("answers an unknown model with NOT_FOUND model_not_found", async () => {
    const error = await rejection(generate(inference, hello(TEST_KEY, "nobody/nothing")));
    expect(error.code).toBe(grpc.status.NOT_FOUND);
    expect(errorDetailOf(error).detail).toMatchObject({ reason: "model_not_found", param: "model" });
  });
});

describe("buf curl", () => {
  it("calls InferenceService/Generate with a JSON body through reflection (no schema) and streams the events", async () => {
    const body = {
      caller: { apiKey: TEST_KEY },
      model: "simulator/echo",
      messages: [{ role: "ROLE_USER", content: [{ text: { text: "hello there" } }] }],
      stream: true,
    };
    const { stdout } = await bufCurl("--data", JSON.stringify(body), `${server.url}/router.v1.InferenceService/Generate`);
    // One JSON document per streamed message, pretty-printed back to back.
    const events = parseConcatenatedJson(stdout);
    const keys = events.map((e) => Object.keys(e)[0]);
    expect(keys[0]).toBe("start");
    expect(keys.slice(-2)).toEqual(["usage", "finish"]);
    expect(keys).toContain("blockDelta");
    expect(events[0].start).toMatchObject({ modelId: "simulator/echo", provider: "simulator" });
    const text = events.map((e) => e.blockDelta?.text ?? "").join("");
    expect(text).toBe("You said: hello there");
    expect(events.at(-2).usage).toMatchObject({ inputTokens: 5, outputTokens: 4, cost: "0.0000085" });
    expect(events.at(-1).finish).toMatchObject({ reason: "FINISH_REASON_STOP", rawReason: "stop" });
  });

  it("reports a bad key as unauthenticated", async () => {
    const body = { caller: { apiKey: "sk-wrong" }, model: "simulator/echo" };
    const failure = await bufCurl("--data", JSON.stringify(body), `${server.url}/router.v1.InferenceService/Generate`).then(
      () => undefined,
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(failure?.code).not.toBe(0);
    expect(failure?.stdout + "" + failure?.stderr).toMatch(/unauthenticated/i);
  });
});

/** Splits `{...}\n{...}` (buf curl's output for a stream) into documents. */
function parseConcatenatedJson(text: string): any[] {
  const documents: any[] = [];
  let depth = 0;
  let inString = false;
  let escaped = false;
  let begin = -1;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (char === "\\") escaped = true;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    else if (char === "{") {
      if (depth++ === 0) begin = i;
    } else if (char === "}" && --depth === 0) documents.push(JSON.parse(text.slice(begin, i + 1)));
  }
  return documents;
}
