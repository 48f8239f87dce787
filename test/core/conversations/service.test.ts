// router.v1.ConversationService on the core's server: a grpc-js client (the
// generated protobuf-es schemas as serializers), `buf curl` through reflection,
// and the gateway's in-process client. Turns are put in the core's store
// directly; how answers get there is run-inference's test.
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCore, type Core } from "../../../core/create-core.ts";
import { createMemoryConversationStore } from "../../../core/conversations/memory-store.ts";
import { createCoreServer, type CoreServer } from "../../../core/server.ts";
import { createInProcessCoreClient } from "../../../gateway/core-client.ts";
import {
  DeleteTurnRequestSchema,
  DeleteTurnResponseSchema,
  GetTurnRequestSchema,
  GetTurnResponseSchema,
  ListItemsRequestSchema,
  ListItemsResponseSchema,
  ListOrder,
  TurnSchema,
  TurnStatus,
  type GetTurnResponse,
  type ListItemsResponse,
} from "../../../gen/router/v1/conversations_pb.js";
import { Role } from "../../../gen/router/v1/inference_pb.js";
import { bufCurl, grpcMethod, rejection } from "../../support/grpc-js.ts";
import { TEST_ENV, TEST_KEY, testConfig } from "../../support/harness.ts";

const OTHER_KEY = "sk-other-org-key";
const T0 = Date.UTC(2026, 10, 3, 12, 0, 0);

const ConversationClient = grpc.makeGenericClientConstructor(
  {
    GetTurn: grpcMethod("/router.v1.ConversationService/GetTurn", GetTurnRequestSchema, GetTurnResponseSchema),
    ListItems: grpcMethod("/router.v1.ConversationService/ListItems", ListItemsRequestSchema, ListItemsResponseSchema),
    DeleteTurn: grpcMethod("/router.v1.ConversationService/DeleteTurn", DeleteTurnRequestSchema, DeleteTurnResponseSchema),
  },
  "ConversationService",
);

function unary<Res>(name: string, request: object): Promise<Res> {
  const call = (client as unknown as Record<string, (r: object, cb: (e: grpc.ServiceError | null, r: Res) => void) => void>)[name].bind(client);
  return new Promise((resolve, reject) => call(request, (error, response) => (error ? reject(error) : resolve(response))));
}

const caller = (apiKey = TEST_KEY) => ({ apiKey });
const getTurn = (id: string, apiKey?: string) => unary<GetTurnResponse>("GetTurn", create(GetTurnRequestSchema, { caller: caller(apiKey), id }));
const listItems = (fields: { id: string; after?: string; includeAfter?: boolean; limit?: number; order?: ListOrder }, apiKey?: string) =>
  unary<ListItemsResponse>("ListItems", create(ListItemsRequestSchema, { caller: caller(apiKey), ...fields }));

let core: Core;
let server: CoreServer;
let client: grpc.Client;

/** A turn of the test organisation whose input is `count` user messages `m0`, `m1`, ... */
function turn(id: string, count = 1, organizationId = "org_test") {
  return create(TurnSchema, {
    id,
    organizationId,
    modelId: "simulator/echo",
    provider: "simulator",
    status: TurnStatus.COMPLETED,
    input: Array.from({ length: count }, (_, i) => ({ role: Role.USER, content: [{ part: { case: "text" as const, value: { text: `m${i}` } } }] })),
    output: [{ role: Role.ASSISTANT, content: [{ part: { case: "reasoning" as const, value: { text: "hmm", signature: "sig" } } }] }],
    usage: { inputTokens: 3, outputTokens: 4, cost: "0.00001" },
    createdAt: timestampFromMs(T0),
    expiresAt: timestampFromMs(T0 + 3_600_000),
  });
}

beforeAll(async () => {
  const config = testConfig("http://127.0.0.1:9/v1");
  config.organizations.push({ id: "org_other", name: "Other", credits: "0", keys: [{ id: "key_other", env: "OTHER_API_KEY", disabled: false, allowed_models: [] }] });
  core = await createCore({
    config,
    env: { ...TEST_ENV, OTHER_API_KEY: OTHER_KEY },
    conversationStore: createMemoryConversationStore({ now: () => T0 }),
  });
  server = await createCoreServer(core, { host: "127.0.0.1", port: 0 });
  client = new ConversationClient(server.url.replace(/^http:\/\//, ""), grpc.credentials.createInsecure());
  await core.conversations.store.save(turn("resp_one", 1));
  await core.conversations.store.save(turn("resp_five", 5));
  await core.conversations.store.save(turn("resp_deleted", 1));
  await core.conversations.store.save(turn("resp_theirs", 1, "org_other"));
});

afterAll(async () => {
  client?.close();
  await server?.close();
  await core?.close();
});

describe("ConversationService from a grpc-js client", () => {
  it("GetTurn answers the caller's stored turn, reasoning signature included", async () => {
    const { turn: found } = await getTurn("resp_one");
    expect(found).toMatchObject({ id: "resp_one", organizationId: "org_test", provider: "simulator", status: TurnStatus.COMPLETED });
    expect(found?.output[0].content[0].part).toMatchObject({ case: "reasoning", value: { signature: "sig" } });
  });

  it.each([
    ["an unknown id", "resp_nope", TEST_KEY],
    ["another organisation's id", "resp_theirs", TEST_KEY],
    ["an id of the caller's organisation asked by another's key", "resp_one", OTHER_KEY],
  ])("GetTurn of %s is NOT_FOUND", async (_name, id, apiKey) => {
    const error = await rejection(getTurn(id, apiKey));
    expect(error.code).toBe(grpc.status.NOT_FOUND);
  });

  it("refuses a wrong or missing key as UNAUTHENTICATED", async () => {
    expect((await rejection(getTurn("resp_one", "sk-wrong"))).code).toBe(grpc.status.UNAUTHENTICATED);
    expect((await rejection(unary("GetTurn", create(GetTurnRequestSchema, { id: "resp_one" })))).code).toBe(grpc.status.UNAUTHENTICATED);
  });

  it("ListItems pages newest first by default, with after, limit and has_more", async () => {
    const first = await listItems({ id: "resp_five", limit: 2 });
    expect(first.items.map((item) => item.id)).toEqual(["resp_five_in4", "resp_five_in3"]);
    expect(first).toMatchObject({ firstId: "resp_five_in4", lastId: "resp_five_in3", hasMore: true });
    expect(first.items[0].message?.content[0].part).toMatchObject({ case: "text", value: { text: "m4" } });
    const second = await listItems({ id: "resp_five", limit: 2, after: first.lastId });
    expect(second.items.map((item) => item.id)).toEqual(["resp_five_in2", "resp_five_in1"]);
    const last = await listItems({ id: "resp_five", limit: 2, after: second.lastId });
    expect(last.items.map((item) => item.id)).toEqual(["resp_five_in0"]);
    expect(last.hasMore).toBe(false);
  });

  it("ListItems in ascending order, 20 by default", async () => {
    const asc = await listItems({ id: "resp_five", order: ListOrder.ASC });
    expect(asc.items.map((item) => item.id)).toEqual(["resp_five_in0", "resp_five_in1", "resp_five_in2", "resp_five_in3", "resp_five_in4"]);
    expect(asc.hasMore).toBe(false);
    const afterTwo = await listItems({ id: "resp_five", order: ListOrder.ASC, after: "resp_five_in2" });
    expect(afterTwo.items.map((item) => item.id)).toEqual(["resp_five_in3", "resp_five_in4"]);
  });

  it("ListItems with include_after lists the item after names first", async () => {
    const fromTwo = await listItems({ id: "resp_five", order: ListOrder.ASC, after: "resp_five_in2", includeAfter: true, limit: 2 });
    expect(fromTwo).toMatchObject({ firstId: "resp_five_in2", lastId: "resp_five_in3", hasMore: true });
    const newestFirst = await listItems({ id: "resp_five", after: "resp_five_in0", includeAfter: true });
    expect(newestFirst.items.map((item) => item.id)).toEqual(["resp_five_in0"]);
    expect(newestFirst.hasMore).toBe(false);
  });

  it.each([
    [{ id: "resp_five", limit: 101 }, "limit"],
    [{ id: "resp_five", limit: -1 }, "limit"],
    [{ id: "resp_five", after: "resp_one_in0" }, "after"],
  ])("ListItems refuses %o as INVALID_ARGUMENT", async (fields, _param) => {
    expect((await rejection(listItems(fields))).code).toBe(grpc.status.INVALID_ARGUMENT);
  });

  it("ListItems tells a bad key before a bad limit (401 first)", async () => {
    expect((await rejection(listItems({ id: "resp_five", limit: 500 }, "sk-wrong"))).code).toBe(grpc.status.UNAUTHENTICATED);
  });

  it("gives input items ids of their own form, apart from the output blocks' <request id>_<index>", async () => {
    const { items } = await listItems({ id: "resp_five", order: ListOrder.ASC, limit: 1 });
    expect(items[0].id).toBe("resp_five_in0");
    expect(items[0].id).not.toBe("resp_five_0");
  });

  it("ListItems of another organisation's turn is NOT_FOUND", async () => {
    expect((await rejection(listItems({ id: "resp_theirs" }))).code).toBe(grpc.status.NOT_FOUND);
  });

  it("DeleteTurn forgets the turn once; another organisation cannot delete it", async () => {
    const del = (id: string, apiKey?: string) => unary<{ id: string; deleted: boolean }>("DeleteTurn", create(DeleteTurnRequestSchema, { caller: caller(apiKey), id }));
    expect((await rejection(del("resp_deleted", OTHER_KEY))).code).toBe(grpc.status.NOT_FOUND);
    expect(await del("resp_deleted")).toMatchObject({ id: "resp_deleted", deleted: true });
    expect((await rejection(getTurn("resp_deleted"))).code).toBe(grpc.status.NOT_FOUND);
    expect((await rejection(del("resp_deleted"))).code).toBe(grpc.status.NOT_FOUND);
  });
});

describe("ConversationService elsewhere", () => {
  it("is listed and callable by buf curl through reflection", async () => {
    const { stdout: services } = await bufCurl("--list-services", server.url);
    expect(services.split("\n")).toContain("router.v1.ConversationService");
    const { stdout } = await bufCurl(
      "--data",
      JSON.stringify({ caller: { apiKey: TEST_KEY }, id: "resp_five", limit: 1, order: "LIST_ORDER_ASC" }),
      `${server.url}/router.v1.ConversationService/ListItems`,
    );
    expect(JSON.parse(stdout)).toMatchObject({ items: [{ id: "resp_five_in0", message: { role: "ROLE_USER" } }], hasMore: true });
  });

  it("is on the gateway's in-process core client", async () => {
    const { turn: found } = await createInProcessCoreClient(core).conversations.getTurn({ caller: { apiKey: TEST_KEY }, id: "resp_one" });
    expect(found?.id).toBe("resp_one");
  });
});
