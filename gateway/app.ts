// The public HTTP gateway: a Koa app whose routes translate each public wire
// format onto the core's RPCs. It holds no business logic.
import Router from "@koa/router";
import Koa, { type Context } from "koa";
import type { Logger } from "pino";
import { pino } from "pino";
import { Code, echoed, routerError } from "../core/errors.ts";
import { newServiceId } from "../core/ids.ts";
import type { CoreClient } from "./core-client.ts";
import { errorHeaders } from "./errors/error-headers.ts";
import { toPublicError, type PublicError } from "./errors/http-status.ts";
import { specErrorBody } from "./errors/spec-error-body.ts";
import { formatRoutes, type GatewayFormat } from "./formats/format.ts";
import { FORMATS } from "./formats/index.ts";
import { BODY_LIMIT_BYTES } from "./limits.ts";
import { logFailure } from "./log-failure.ts";
import { readJsonBody } from "./read-body.ts";
import { readFormOr } from "./read-form.ts";
import { RESPONSES_WEBSOCKET_DEFAULTS, type ResponsesWebsocketSettings } from "../wire/responses-websocket.ts";
import { createResponsesSockets, type ResponsesSockets } from "./formats/responses/socket.ts";

export interface AppDeps {
  core: CoreClient;
  logger?: Logger;
  /** Prefix of service ids (request ids are chat ids). */
  idPrefix?: string;
  /** Largest accepted body in bytes, JSON or form (default limits.ts BODY_LIMIT_BYTES); images travel inline as data URIs, hence the room. */
  bodyLimit?: number;
  /** The public formats served (formats/index.ts); tests add their own. */
  formats?: readonly GatewayFormat[];
  /** The Responses WebSocket mode (the configuration's `responses_websocket`); default: on, with its defaults. */
  websocket?: ResponsesWebsocketSettings;
}

/** The gateway's Koa app, with the WebSocket upgrades its HTTP server hands over (http-server.ts). */
export type GatewayApp = Koa & { sockets: ResponsesSockets };

export function createApp(deps: AppDeps): GatewayApp {
  const logger = deps.logger ?? pino({ level: "silent" });
  const idPrefix = deps.idPrefix ?? "rtr";
  const app = new Koa();
  // Errors are answered and logged by our own middleware; Koa's default logger
  // would also print "Premature close" for every client that disconnects.
  app.silent = true;

  app.use(async (ctx, next) => {
    const started = performance.now();
    ctx.state.requestId = newServiceId(idPrefix);
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw routerError(Code.NotFound, "not_found", `No route for ${ctx.method} ${echoed(ctx.path)}.`);
      }
    } catch (error) {
      const publicError = toPublicError(error);
      ctx.status = publicError.status;
      // The format of the matched route shapes the body (its body read included); with no route, the spec's shape.
      const encodeError: (error: PublicError) => unknown = ctx.state.encodeError ?? specErrorBody;
      ctx.body = encodeError(publicError);
      ctx.set(errorHeaders(publicError));
      // Refused before its body was read to the end (past the limit, an undecodable or unsupported coding), the
      // rest of the body would sit before the client's next request on this keep-alive connection: what has
      // arrived is drained, and a body still arriving (its size unknown) closes the connection.
      if (!ctx.req.complete) ctx.set("connection", "close");
      else ctx.req.resume();
      if (publicError.status >= 500) logFailure(logger, ctx.state, error, publicError, "request failed");
    }
    // Set last, before Koa answers: a stream sent it with its own headers (ctx.set does nothing then). A
    // header set earlier would make Node keep a second copy of every header for the whole stream.
    ctx.set("x-request-id", ctx.state.requestId);
    // A streamed answer is still running (write-event-stream.ts): its line is logged when it ends, with no frame waiting for it.
    const eventStream: Promise<void> | undefined = ctx.state.eventStream;
    if (!eventStream) logRequest(logger, ctx, started);
    else {
      eventStream.then(
        () => logRequest(logger, ctx, started),
        (error: unknown) => {
          ctx.state.streamError ??= error;
          logRequest(logger, ctx, started);
        },
      );
    }
  });

  // Read by each POST route, after it claimed its error shape (formats/format.ts).
  const bodyLimit = deps.bodyLimit ?? BODY_LIMIT_BYTES;
  const json = readJsonBody(bodyLimit);
  const readBodies = { json, jsonOrForm: readFormOr(json, bodyLimit) };
  const router = new Router();
  for (const format of deps.formats ?? FORMATS) format.register(formatRoutes(router, format, readBodies), { core: deps.core });
  app.use(router.routes());
  const sockets = createResponsesSockets({ core: deps.core, settings: deps.websocket ?? RESPONSES_WEBSOCKET_DEFAULTS, logger, idPrefix });
  return Object.assign(app, { sockets });
}

/** The access-log line of a finished request, after the failure line of a stream that broke off. */
function logRequest(logger: Logger, ctx: Context, started: number): void {
  const { streamError } = ctx.state;
  if (streamError) logFailure(logger, ctx.state, streamError, toPublicError(streamError), "stream failed after commit");
  if (logger.isLevelEnabled("info")) {
    const { requestId, requestTags } = ctx.state;
    logger.info({ requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: performance.now() - started, requestTags });
  }
}
