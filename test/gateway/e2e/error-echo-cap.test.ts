// Errors quote what the caller sent (an id, a model name, an unknown field's
// name), but bounded: a value of megabytes comes back as its first 256
// characters and the count of the rest, in an error of a few hundred bytes,
// in-process and split (where the message also crosses gRPC). Before, a 31 MB
// taskId came back in a 31 MB 404.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_ECHOED_CHARS, MAX_ERROR_MESSAGE_CHARS } from "../../../core/errors.ts";
import { startGateway, TEST_KEY, testConfig, type Gateway } from "../../support/harness.ts";

const HUGE = 4 * 1024 * 1024;
/** An error answer quoting a huge value stays this small. */
const SMALL_ANSWER = 2048;

describe.each([{ split: false }, { split: true }])("errors quoting a huge value (split: $split)", ({ split }) => {
  let gateway: Gateway;
  beforeAll(async () => {
    gateway = await startGateway(testConfig("http://127.0.0.1:9/v1"), { split });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  async function post(path: string, body: object) {
    const response = await fetch(`${gateway.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "x-api-key": TEST_KEY, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, text, error: JSON.parse(text).error as Record<string, string> };
  }

  const cut = `${"a".repeat(MAX_ECHOED_CHARS)}... (${HUGE - MAX_ECHOED_CHARS} more characters)`;

  it("a taskId: 404 task_not_found quoting its start", async () => {
    const answer = await post("/api/v1/getAsyncResponse", { taskId: `x:${"a".repeat(HUGE - 2)}` });
    expect([answer.status, answer.error.code]).toEqual([404, "task_not_found"]);
    expect(answer.text.length).toBeLessThan(SMALL_ANSWER);
    expect(answer.error.message).toBe(`No task with id "x:${"a".repeat(MAX_ECHOED_CHARS - 2)}... (${HUGE - MAX_ECHOED_CHARS} more characters)" was found.`);
  });

  it("a model name: 404 model_not_found", async () => {
    const answer = await post("/api/v1/chat/completions", { model: "a".repeat(HUGE), messages: [{ role: "user", content: "hi" }] });
    expect([answer.status, answer.error.code]).toEqual([404, "model_not_found"]);
    expect(answer.text.length).toBeLessThan(SMALL_ANSWER);
    expect(answer.error.message).toBe(`Model ${cut} is not in the catalogue.`);
  });

  it("a model name, in Anthropic's envelope", async () => {
    const answer = await post("/v1/messages", { model: "a".repeat(HUGE), max_tokens: 8, messages: [{ role: "user", content: "hi" }] });
    expect(answer.status).toBe(404);
    expect(answer.text.length).toBeLessThan(SMALL_ANSWER);
    expect(answer.error.message).toBe(`Model ${cut} is not in the catalogue.`);
  });

  it("unknown provider names: each quoted bounded", async () => {
    const answer = await post("/api/v1/chat/completions", { model: "simulator/echo", messages: [{ role: "user", content: "hi" }], provider: { only: ["a".repeat(HUGE)] } });
    expect([answer.status, answer.error.param]).toEqual([400, "provider.only"]);
    expect(answer.error.message).toBe(`provider.only names a provider that does not exist: "${cut}".`);
  });

  it("a message quoting many bounded values is still cut where every error is built", async () => {
    const only = Array.from({ length: 64 }, (_, i) => `${i}${"a".repeat(HUGE / 64)}`);
    const answer = await post("/api/v1/chat/completions", { model: "simulator/echo", messages: [{ role: "user", content: "hi" }], provider: { only } });
    expect([answer.status, answer.error.param]).toEqual([400, "provider.only"]);
    expect(answer.error.message).toMatch(/^provider\.only names providers that do not exist: "0a+\.\.\. \(\d+ more characters\)", "1a+/);
    expect(answer.error.message).toMatch(/\.\.\. \(\d+ more characters\)$/);
    expect(answer.error.message.length).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS + 40);
  });

  // A path or query is bounded by Node's 16 KB head: errors quoting it are cut to their 256 characters all the same.
  const LONG = 12_000;
  const longCut = `${"a".repeat(MAX_ECHOED_CHARS)}... (${LONG - MAX_ECHOED_CHARS} more characters)`;

  async function send(method: string, path: string) {
    const response = await fetch(`${gateway.url}${path}`, { method, headers: { authorization: `Bearer ${TEST_KEY}`, "x-api-key": TEST_KEY, "anthropic-version": "2023-06-01" } });
    return { status: response.status, error: ((await response.json()) as { error: Record<string, string> }).error };
  }

  it("the Anthropic models list's after_id", async () => {
    const answer = await send("GET", `/v1/models?after_id=${"a".repeat(LONG)}`);
    expect([answer.status, answer.error.message]).toEqual([400, `after_id ${longCut} is not a model of this catalogue.`]);
  });

  it("a method a path does not serve: 405 quoting the path bounded", async () => {
    const answer = await send("PUT", `/api/v1/responses/${"a".repeat(LONG)}`);
    expect([answer.status, answer.error.message]).toEqual([405, `PUT is not allowed on /api/v1/responses/${"a".repeat(MAX_ECHOED_CHARS - "/api/v1/responses/".length)}... (${LONG + "/api/v1/responses/".length - MAX_ECHOED_CHARS} more characters); use GET, DELETE.`]);
  });

  it("input_items' after", async () => {
    const created = await fetch(`${gateway.url}/api/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "simulator/echo", input: "hi", store: true }),
    });
    const { id } = (await created.json()) as { id: string };
    const answer = await send("GET", `/api/v1/responses/${id}/input_items?after=${"a".repeat(LONG)}`);
    expect([answer.status, answer.error.message]).toEqual([400, `No input item ${longCut} in ${id}.`]);
  });

  it("an unknown field's name in chat: param and message bounded", async () => {
    const answer = await post("/api/v1/chat/completions", { model: "simulator/echo", messages: [{ role: "user", content: "hi" }], ["a".repeat(HUGE)]: 1 });
    expect([answer.status, answer.error.code]).toEqual([400, "invalid_parameter"]);
    expect(answer.error.param).toBe(cut);
    expect(answer.text.length).toBeLessThan(SMALL_ANSWER * 2);
  });
});
