// The Responses API over WebSocket (docs/responses.md, "WebSocket mode"), the
// transport Codex prefers: `GET /v1/responses` with `Upgrade: websocket`,
// authenticated in the handshake; then each `response.create` text frame is a
// Responses request body, answered with the same events the SSE stream
// carries (the same encoder), one JSON event per text frame. One socket
// carries many turns, one after another. A turn may continue the socket's last
// answer by `previous_response_id` even when it was not stored: the socket
// keeps that answer's input and output (Codex sends only the new items).
import { STATUS_CODES, type IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import type { Logger } from "pino";
import type { ResponsesWebsocketSettings } from "../../../wire/responses-websocket.ts";
import { Code, ConnectError, routerError } from "../../../core/errors.ts";
import { newServiceId } from "../../../core/ids.ts";
import type { GenerateResponse } from "../../../gen/router/v1/inference_pb.js";
import type { CoreClient } from "../../core-client.ts";
import { bearerKey } from "../../credentials.ts";
import { toPublicError, type PublicError } from "../../errors/http-status.ts";
import { cacheKeyOf } from "../../router-fields.ts";
import { stopCall } from "../../start-call.ts";
import { decodeResponsesRequest } from "./decode-request.ts";
import { encodeResponsesError } from "./encode-error.ts";
import { createResponseStreamEncoder } from "./encode-stream.ts";
import { SocketConversation } from "./socket-conversation.ts";

/** The paths the mode answers on, as for POST. */
const SOCKET_PATHS = new Set(["/v1/responses", "/api/v1/responses"]);

export interface ResponsesSocketDeps {
  core: CoreClient;
  settings: ResponsesWebsocketSettings;
  logger: Logger;
  idPrefix: string;
}

export interface ResponsesSockets {
  /** The HTTP server's `upgrade` listener. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Closes every open socket (shutdown): a turn in flight is stopped. */
  close(): void;
  /** Sockets accepted and turns begun since the start (for operators and tests). */
  readonly counts: { sockets: number; turns: number };
}

export function createResponsesSockets(deps: ResponsesSocketDeps): ResponsesSockets {
  const { settings } = deps;
  // No permessage-deflate, though Codex offers it: zlib runs each frame through the thread pool, which
  // measured 2 ms more to a turn's last event on loopback (bench/results/websocket.md); frames are small.
  const server = new WebSocketServer({ noServer: true, maxPayload: settings.max_frame_bytes, perMessageDeflate: false });
  const counts = { sockets: 0, turns: 0 };
  return {
    counts,
    handleUpgrade(request, socket, head) {
      void upgrade(request, socket, head).catch((error: unknown) => {
        deps.logger.error({ err: error }, "websocket upgrade failed");
        socket.destroy();
      });
    },
    close() {
      for (const client of server.clients) client.close(1001, "the gateway is shutting down");
    },
  };

  async function upgrade(request: IncomingMessage, socket: Duplex, head: Buffer) {
    const path = new URL(request.url ?? "/", "http://gateway").pathname;
    if (!SOCKET_PATHS.has(path)) return refuse(socket, routerError(Code.NotFound, "not_found", `No WebSocket endpoint at ${path}.`));
    if (!settings.enabled) {
      return refuse(socket, routerError(Code.FailedPrecondition, "websocket_disabled", "The Responses WebSocket mode is off on this gateway: use POST /v1/responses."), 426);
    }
    let apiKey: string;
    try {
      apiKey = bearerKey(request.headers);
      // The key is checked in the handshake, so a bad one never gets a socket.
      await deps.core.inference.getKey({ caller: { apiKey } });
    } catch (error) {
      return refuse(socket, error);
    }
    const cacheKey = cacheKeyOf(request.headers);
    server.handleUpgrade(request, socket, head, (ws) => {
      counts.sockets++;
      new ResponsesSocket(ws, deps, apiKey, cacheKey, counts).start();
    });
  }
}

/** Answers an upgrade with an HTTP error in the spec's shape, and closes. */
function refuse(socket: Duplex, error: unknown, status?: number) {
  const publicError = toPublicError(error);
  const body = JSON.stringify(encodeResponsesError(publicError));
  const code = status ?? publicError.status;
  socket.end(`HTTP/1.1 ${code} ${STATUS_CODES[code] ?? "Error"}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** One client's socket: its turns, one at a time, and its keep-alive. */
class ResponsesSocket {
  private readonly ws: WebSocket;
  private readonly deps: ResponsesSocketDeps;
  private readonly apiKey: string;
  private readonly cacheKey: string | undefined;
  private readonly conversation = new SocketConversation();
  private turns = 0;
  /** The turn in flight: its abort. */
  private running: AbortController | undefined;
  private lastHeard = performance.now();
  private awaitingPong = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly counts: ResponsesSockets["counts"];

  constructor(ws: WebSocket, deps: ResponsesSocketDeps, apiKey: string, cacheKey: string | undefined, counts: ResponsesSockets["counts"]) {
    this.counts = counts;
    this.ws = ws;
    this.deps = deps;
    this.apiKey = apiKey;
    this.cacheKey = cacheKey;
  }

  start() {
    const { ws } = this;
    ws.on("message", (data, isBinary) => this.received(data as Buffer, isBinary));
    ws.on("pong", () => (this.awaitingPong = false));
    ws.on("close", () => {
      clearInterval(this.timer);
      // A closed socket stops the turn in flight; the core settles what was produced.
      this.running?.abort();
    });
    ws.on("error", () => ws.terminate());
    this.timer = setInterval(() => this.tick(), this.deps.settings.ping_seconds * 1000);
    this.timer.unref();
  }

  /** Pings, cuts off a client that did not answer the last ping, closes an idle socket. */
  private tick() {
    const { ws, deps } = this;
    if (this.awaitingPong) return ws.terminate();
    if (!this.running && performance.now() - this.lastHeard >= deps.settings.idle_seconds * 1000) return ws.close(1000, "idle");
    this.awaitingPong = true;
    ws.ping();
  }

  private received(data: Buffer, isBinary: boolean) {
    this.lastHeard = performance.now();
    if (isBinary) return this.sendError(invalidFrame("Frames are JSON text; a binary frame was sent."));
    let frame: unknown;
    try {
      frame = JSON.parse(data.toString("utf8"));
    } catch {
      return this.sendError(invalidFrame("The frame is not valid JSON."));
    }
    if (typeof frame !== "object" || frame === null || Array.isArray(frame)) return this.sendError(invalidFrame("The frame must be a JSON object with a type."));
    const { type, ...body } = frame as Record<string, unknown>;
    // Codex tells the server it has read an answer: nothing to do.
    if (type === "response.processed") return;
    if (type !== "response.create") return this.sendError(invalidFrame(`Unknown frame type ${JSON.stringify(type)}: send response.create.`));
    if (this.running) return this.sendError(invalidFrame("A response is already in progress on this socket: wait for it to finish."));
    if (this.turns >= this.deps.settings.max_turns) return this.ws.close(1008, `turn limit reached (${this.deps.settings.max_turns}): open a new socket`);
    this.turns++;
    this.counts.turns++;
    const controller = new AbortController();
    this.running = controller;
    void this.turn(body, controller).finally(() => {
      if (this.running === controller) this.running = undefined;
      this.lastHeard = performance.now();
    });
  }

  /** One `response.create`: decoded as POST's body, answered as POST's stream. */
  private async turn(body: Record<string, unknown>, controller: AbortController) {
    const { deps, conversation } = this;
    const requestId = newServiceId(deps.idPrefix);
    const { generate, client_metadata: _clientMetadata, ...rest } = body;
    let started: AsyncIterator<GenerateResponse> | undefined;
    try {
      const expanded = conversation.expand(rest);
      // A warm-up (`generate: false`) answers an empty response Codex continues from; nothing runs.
      if (generate === false) return this.sendFrames(conversation.warmUp(expanded, requestId));
      const { request, echo, background } = decodeResponsesRequest({ ...expanded.body, stream: true }, { apiKey: this.apiKey, requestId, cacheKey: this.cacheKey });
      if (background) throw routerError(Code.InvalidArgument, "invalid_parameter", "background is not served over the WebSocket: use POST /v1/responses.", { param: "background" });
      const events = deps.core.inference.generate(request, { signal: controller.signal })[Symbol.asyncIterator]();
      started = events;
      const first = await events.next();
      if (first.done || first.value.event.case !== "start") throw new Error("the core's stream must open with a start event");
      const encoder = createResponseStreamEncoder(first.value.event.value, echo);
      const record = conversation.recorder(expanded, request.store !== false);
      let ended = false;
      try {
        for (let step: IteratorResult<GenerateResponse> = first; !step.done; step = await events.next()) {
          for (const frame of encoder.encode(step.value)) this.sendEvent(frame.data, record);
        }
        ended = true;
        for (const frame of encoder.done()) this.sendEvent(frame.data, record);
      } catch (error) {
        if (controller.signal.aborted) return;
        for (const frame of encoder.error(toPublicError(error))) this.sendEvent(frame.data, record);
      } finally {
        if (!ended) stopCall(events);
      }
    } catch (error) {
      if (started) stopCall(started);
      if (controller.signal.aborted) return;
      if (!(error instanceof ConnectError)) deps.logger.error({ err: error, requestId }, "websocket turn failed");
      this.sendError(toPublicError(error));
    }
  }

  private sendEvent(data: string, record: (data: string) => void) {
    record(data);
    this.send(data);
  }

  private sendFrames(frames: string[]) {
    for (const frame of frames) this.send(frame);
  }

  private send(data: string) {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(data);
  }

  /** An error before any event of the turn, as Codex reads one: `type: error` with the HTTP status it would have had. */
  private sendError(error: PublicError) {
    this.send(JSON.stringify({ type: "error", status: error.status, ...encodeResponsesError(error) }));
  }
}

const invalidFrame = (message: string) => toPublicError(routerError(Code.InvalidArgument, "invalid_frame", message));
