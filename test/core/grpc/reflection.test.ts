import { once } from "node:events";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { describe, it, expect, beforeAll, afterAll } from "vitest";
import { create, fromBinary } from "@bufbuild/protobuf";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, createClient } from "@connectrpc/connect";
import type { ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import { registerReflection } from "../../../core/grpc/reflection.ts";
import { createHealthState, registerHealth, ServingStatus } from "../../../core/grpc/health.ts";
import type { HealthState } from "../../../core/grpc/health.ts";
import {
  Health,
  HealthCheckRequestSchema,
  HealthCheckResponseSchema,
} from "../../../gen/grpc/health/v1/health_pb.js";
import type { HealthCheckResponse } from "../../../gen/grpc/health/v1/health_pb.js";
import {
  ServerReflection,
  ServerReflectionRequestSchema,
} from "../../../gen/grpc/reflection/v1/reflection_pb.js";
import type { ServerReflectionResponse } from "../../../gen/grpc/reflection/v1/reflection_pb.js";
import { CatalogueService, ModelSchema } from "../../../gen/router/v1/catalogue_pb.js";
import { bufCurl, grpcMethod } from "../../support/grpc-js.ts";

const CATALOGUE = "router.v1.CatalogueService";

/** Health state that also reports when a Watch stream has let go of it. */
function observedHealth(): HealthState & { unsubscribed: Promise<void> } {
  const inner = createHealthState();
  let resolveUnsubscribed = () => {};
  const unsubscribed = new Promise<void>((resolve) => (resolveUnsubscribed = resolve));
  return {
    ...inner,
    unsubscribed,
    subscribe(listener) {
      const unsubscribe = inner.subscribe(listener);
      return () => {
        unsubscribe();
        resolveUnsubscribed();
      };
    },
  };
}

const health = observedHealth();
health.set(CATALOGUE, ServingStatus.SERVING);

function routes(router: ConnectRouter): void {
  router.service(CatalogueService, {
    listModels: () => ({ models: [create(ModelSchema, { id: "sim/echo", name: "Echo" })] }),
  });
  registerHealth(router, health);
  registerReflection(router, [CatalogueService]);
}

const server = http2.createServer(connectNodeAdapter({ routes }));
// http2 server.close() waits for idle client sessions to go away: track them to destroy them.
const sessions = new Set<http2.ServerHttp2Session>();
server.on("session", (session) => {
  sessions.add(session);
  session.on("close", () => sessions.delete(session));
});
let baseUrl = "";

beforeAll(async () => {
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const session of sessions) session.destroy();
  await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
});

describe("buf curl through server reflection", () => {
  it("lists the registered services, health and reflection", async () => {
    const { stdout } = await bufCurl("--list-services", baseUrl);
    expect(stdout.trim().split("\n").sort()).toEqual(
      ["grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", CATALOGUE].sort(),
    );
  });

  it("calls a method without a schema flag", async () => {
    const { stdout } = await bufCurl(`${baseUrl}/${CATALOGUE}/ListModels`);
    expect(JSON.parse(stdout)).toEqual({ models: [{ id: "sim/echo", name: "Echo" }] });
  });

  it("describes the health service too", async () => {
    const { stdout } = await bufCurl("--data", "{}", `${baseUrl}/grpc.health.v1.Health/Check`);
    expect(JSON.parse(stdout)).toEqual({ status: "SERVING" });
  });
});

describe("reflection stream", () => {
  it("answers each request in order, with the file and its imports", async () => {
    const client = createClient(ServerReflection, createGrpcTransport({ baseUrl }));
    const requests: MessageInitShape<typeof ServerReflectionRequestSchema>["messageRequest"][] = [
      { case: "fileContainingSymbol", value: "router.v1.Model" },
      { case: "fileContainingSymbol", value: `${CATALOGUE}.ListModels` },
      { case: "fileByFilename", value: "google/protobuf/struct.proto" },
      { case: "fileContainingSymbol", value: "router.v1.Nope" },
      { case: "allExtensionNumbersOfType", value: "router.v1.Model" },
      { case: "fileContainingExtension", value: { containingType: "router.v1.Model", extensionNumber: 99 } },
    ];
    async function* send() {
      for (const messageRequest of requests) yield create(ServerReflectionRequestSchema, { messageRequest });
    }
    const answers: ServerReflectionResponse["messageResponse"][] = [];
    for await (const res of client.serverReflectionInfo(send())) answers.push(res.messageResponse);

    const fileNames = (a: ServerReflectionResponse["messageResponse"]) =>
      a.case === "fileDescriptorResponse"
        ? a.value.fileDescriptorProto.map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes).name)
        : a;
    expect(fileNames(answers[0])).toEqual(["router/v1/catalogue.proto", "google/protobuf/struct.proto"]);
    expect(fileNames(answers[1])).toEqual(["router/v1/catalogue.proto", "google/protobuf/struct.proto"]);
    expect(fileNames(answers[2])).toEqual(["google/protobuf/struct.proto"]);
    expect(answers[3]).toMatchObject({ case: "errorResponse", value: { errorCode: Code.NotFound } });
    expect(answers[4]).toMatchObject({
      case: "allExtensionNumbersResponse",
      value: { baseTypeName: "router.v1.Model", extensionNumber: [] },
    });
    expect(answers[5]).toMatchObject({ case: "errorResponse", value: { errorCode: Code.NotFound } });
  });
});

describe("health", () => {
  it("answers Check from a grpc-js client", async () => {
    const HealthClient = grpc.makeGenericClientConstructor(
      { Check: grpcMethod("/grpc.health.v1.Health/Check", HealthCheckRequestSchema, HealthCheckResponseSchema) },
      "Health",
    );
    const client = new HealthClient(baseUrl.replace("http://", ""), grpc.credentials.createInsecure());
    const check = (service: string) =>
      new Promise<HealthCheckResponse>((resolve, reject) =>
        client.Check(create(HealthCheckRequestSchema, { service }), (err: grpc.ServiceError | null, res: HealthCheckResponse) =>
          err ? reject(err) : resolve(res),
        ),
      );
    try {
      expect((await check("")).status).toBe(ServingStatus.SERVING);
      expect((await check(CATALOGUE)).status).toBe(ServingStatus.SERVING);
      await expect(check("no.such.Service")).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    } finally {
      client.close();
    }
  });

  it("streams status changes from Watch until the client aborts", async () => {
    const client = createClient(Health, createGrpcTransport({ baseUrl }));
    const abort = new AbortController();
    const stream = client.watch({ service: CATALOGUE }, { signal: abort.signal })[Symbol.asyncIterator]();

    expect((await stream.next()).value?.status).toBe(ServingStatus.SERVING);
    health.set(CATALOGUE, ServingStatus.NOT_SERVING);
    expect((await stream.next()).value?.status).toBe(ServingStatus.NOT_SERVING);
    health.set(CATALOGUE, ServingStatus.SERVING);
    expect((await stream.next()).value?.status).toBe(ServingStatus.SERVING);

    abort.abort();
    await expect(stream.next()).rejects.toMatchObject({ code: Code.Canceled });
    // The server side must let go of its subscription once the client is gone.
    await health.unsubscribed;
  });
});
