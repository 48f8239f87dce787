// Two cores on one Redis (REDIS_URL): an answer stored through one is read and
// continued through the other, as two instances of a deployment would.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createCore, type Core } from "../../../core/create-core.ts";
import { createInProcessCoreClient } from "../../../gateway/core-client.ts";
import { GenerateRequestSchema, PublicFormat, Role, type GenerateResponse } from "../../../gen/router/v1/inference_pb.js";
import { TEST_ENV, TEST_KEY, testConfig } from "../../support/harness.ts";
import { startRedisServer, type RedisServer } from "../../support/redis-server.ts";
import { FORMAT_FIELDS } from "../../support/request-formats.ts";

let redis: RedisServer;
let first: Core;
let second: Core;

beforeAll(async () => {
  redis = await startRedisServer();
  const env = { ...TEST_ENV, REDIS_URL: redis.url, REDIS_PREFIX: "shared:" };
  first = await createCore({ config: testConfig("http://127.0.0.1:9/v1"), env });
  second = await createCore({ config: testConfig("http://127.0.0.1:9/v1"), env });
});

afterAll(async () => {
  await first?.close();
  await second?.close();
  await redis?.stop();
});

async function generate(core: Core, fields: MessageInitShape<typeof GenerateRequestSchema>): Promise<GenerateResponse[]> {
  const init = { caller: { apiKey: TEST_KEY }, ...FORMAT_FIELDS.responses, model: "simulator/echo", stream: true, ...fields } as MessageInitShape<typeof GenerateRequestSchema>;
  const events: GenerateResponse[] = [];
  for await (const event of createInProcessCoreClient(core).inference.generate(create(GenerateRequestSchema, init))) events.push(event);
  await Promise.all([core.conversations.idle(), core.accounts.idle()]);
  return events;
}

const user = (text: string) => ({ role: Role.USER, content: [{ part: { case: "text" as const, value: { text } } }] });
const inputTokensOf = (events: GenerateResponse[]) => events.flatMap((e) => (e.event.case === "usage" ? [e.event.value.inputTokens] : []))[0];

it("stores on one instance, reads and continues on the other", async () => {
  await generate(first, { requestId: "resp_shared", messages: [user("remember the number seven")] });
  const { turn } = await createInProcessCoreClient(second).conversations.getTurn({ caller: { apiKey: TEST_KEY }, id: "resp_shared" });
  expect(turn?.output[0].content[0].part).toMatchObject({ case: "text", value: { text: "You said: remember the number seven" } });

  const continued = await generate(second, { requestId: "resp_shared_2", conversation: { previousId: "resp_shared" }, messages: [user("which number")] });
  const alone = await generate(second, { store: false, messages: [user("which number")] });
  expect(inputTokensOf(continued)).toBeGreaterThan(inputTokensOf(alone));
  const chained = await first.conversations.store.chain("org_test", "resp_shared_2", 10);
  expect(chained.map((t) => t.id)).toEqual(["resp_shared_2", "resp_shared"]);
});
