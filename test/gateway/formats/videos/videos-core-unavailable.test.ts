// The video routes' lookups that may find nothing (a model on chat
// completions' video body, getAsyncResponse's model and upstream ids) treat
// only the core's NotFound as "nothing": a core out of reach is 503
// core_unavailable, not a 400 about chat's messages or a 404 for the task.
import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError } from "../../../../core/errors.ts";
import { createCore, type Core } from "../../../../core/create-core.ts";
import { createApp } from "../../../../gateway/app.ts";
import { createInProcessCoreClient, createRemoteCoreClient, type CoreClient } from "../../../../gateway/core-client.ts";
import { listenGateway } from "../../../../gateway/http-server.ts";
import { freePort } from "../../../support/redis-server.ts";
import { TEST_ENV, TEST_KEY, testConfig } from "../../../support/harness.ts";

async function serve(core: CoreClient): Promise<{ server: Server; url: string }> {
  const server = listenGateway(createApp({ core }), 0, "127.0.0.1");
  await once(server, "listening");
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1` };
}

async function close(server: Server | undefined) {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
}

const post = (url: string, body: object) =>
  fetch(url, { method: "POST", headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" }, body: JSON.stringify(body) });

async function expectCoreUnavailable(response: Response) {
  const body = (await response.json()) as { error: { code: string } };
  expect([response.status, body.error.code], JSON.stringify(body)).toEqual([503, "core_unavailable"]);
}

describe("video lookups with the core out of reach", () => {
  let gateway: { server: Server; url: string } | undefined;
  beforeAll(async () => {
    gateway = await serve(createRemoteCoreClient(`http://127.0.0.1:${await freePort()}`));
  });
  afterAll(() => close(gateway?.server));

  it("a video body on chat completions is 503 core_unavailable (not a 400 about messages)", async () => {
    await expectCoreUnavailable(await post(`${gateway!.url}/chat/completions`, { model: "any/video-model", prompt: "a wave" }));
  });

  it("getAsyncResponse is 503 core_unavailable", async () => {
    await expectCoreUnavailable(await post(`${gateway!.url}/getAsyncResponse`, { taskId: "job-1", model: "any/video-model" }));
  });
});

describe("getAsyncResponse when the task is not found and the catalogue is out of reach", () => {
  let core: Core | undefined;
  let gateway: { server: Server; url: string } | undefined;
  beforeAll(async () => {
    core = await createCore({ config: testConfig("http://127.0.0.1:9"), env: TEST_ENV });
    const client = createInProcessCoreClient(core);
    // The task store answers (NotFound for an unknown id); the model's lookup then fails as an unreachable core does.
    const unreachable = () => Promise.reject(new ConnectError("connect ECONNREFUSED 127.0.0.1:1", Code.Unavailable));
    gateway = await serve({ ...client, catalogue: { ...client.catalogue, getModel: unreachable } as CoreClient["catalogue"] });
  });
  afterAll(async () => {
    await close(gateway?.server);
    await core?.close();
  });

  it("is 503 core_unavailable, not 404 for a task it could not look for", async () => {
    await expectCoreUnavailable(await post(`${gateway!.url}/getAsyncResponse`, { taskId: "job-1", model: "test/ok" }));
  });
});
