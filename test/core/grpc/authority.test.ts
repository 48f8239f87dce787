// The core over HTTP/2 with an :authority that is no URL's (issue 18, found with HOST=::1): Node's
// own http2.connect sends `::1:<port>` for http://[::1]:<port>, and Connect's adapter threw on it
// out of the request handler, ending the core process. Each such call is answered, and the core lives on.
import { once } from "node:events";
import http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCore, type Core } from "../../../core/create-core.ts";
import { createCoreServer, type CoreServer } from "../../../core/server.ts";
import { TEST_ENV, testConfig } from "../../support/harness.ts";

let core: Core;
let server: CoreServer;
beforeAll(async () => {
  core = await createCore({ config: testConfig("http://127.0.0.1:9/v1"), env: TEST_ENV });
  server = await createCoreServer(core, { host: "127.0.0.1", port: 0 });
});
afterAll(async () => {
  await server?.close();
  await core?.close();
});

/** One Connect unary GetModel with the given :authority; its status and body. */
async function getModel(authority: string): Promise<{ status: number; json: unknown }> {
  const session = http2.connect(server.url);
  try {
    const request = session.request({ ":method": "POST", ":path": "/router.v1.CatalogueService/GetModel", ":authority": authority, "content-type": "application/json" });
    request.end(JSON.stringify({ id: "simulator/echo" }));
    const [headers] = (await once(request, "response")) as [http2.IncomingHttpHeaders];
    let text = "";
    request.setEncoding("utf8");
    for await (const chunk of request) text += chunk;
    return { status: Number(headers[":status"]), json: JSON.parse(text) };
  } finally {
    session.close();
  }
}

describe("an :authority that is no URL's", () => {
  it.each(["::1:50051", "[::1", "bad:host:1"])("%s is answered as any other call", async (authority) => {
    const answer = await getModel(authority);
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ model: { id: "simulator/echo" } });
  });

  it("a well-formed one still works, after them", async () => {
    expect((await getModel(`[::1]:${server.port}`)).status).toBe(200);
  });
});
