// What a public format is to the app: its routes, and the shape of its error
// bodies. A new format is one folder exporting a GatewayFormat, plus one line
// in formats/index.ts.
import type Router from "@koa/router";
import type { Context, Middleware } from "koa";
import { Code, echoed, routerError } from "../../core/errors.ts";
import type { CoreClient } from "../core-client.ts";
import type { PublicError } from "../errors/http-status.ts";

export interface GatewayFormat {
  /**
   * The body of an HTTP error answered by one of this format's routes (the
   * status and headers are the same for every format). Errors inside a
   * committed stream are the stream encoder's (write-event-stream.ts).
   */
  encodeError(error: PublicError): unknown;
  register(routes: FormatRoutes, deps: FormatDeps): void;
}

export interface FormatDeps {
  core: CoreClient;
}

/** A route's handler: it answers through `ctx` (or throws, and the app answers with the format's error body). */
export type RouteHandler = (ctx: Context) => Promise<void>;

/** Where a format adds its routes; each route answers its errors in the format's shape. */
export interface FormatRoutes {
  get(path: string, handler: RouteHandler): void;
  /** `options.form`: a multipart/form-data body is read as a FormData (read-form.ts), any other as JSON. */
  post(path: string, handler: RouteHandler, options?: { form?: boolean }): void;
  delete(path: string, handler: RouteHandler): void;
}

/** The app's body readers, made once with its body limit (app.ts). */
export interface BodyReaders {
  /** Reads the body as JSON (read-body.ts). */
  json: Middleware;
  /** Reads a multipart/form-data body as a FormData, any other as JSON (read-form.ts). */
  jsonOrForm: Middleware;
}

/**
 * Adds a format's routes to the app's router. Each route first records the
 * format's error encoder in `ctx.state.encodeError`, before anything can
 * throw (the app's error middleware reads it); a POST route then reads its
 * body (`readBodies`), so an unreadable body is told in the format's own shape.
 * One router for every format keeps routing one match per request.
 */
export function formatRoutes(router: Router, format: GatewayFormat, readBodies: BodyReaders): FormatRoutes {
  const claimErrors: Middleware = (ctx, next) => {
    ctx.state.encodeError = format.encodeError;
    return next();
  };
  // A path's methods, filled in as they are registered (a path may get GET and DELETE apart).
  const methodsOf = new Map<string, Set<string>>();
  const serve = (method: string, path: string) => {
    let methods = methodsOf.get(path);
    if (!methods) {
      methods = new Set();
      methodsOf.set(path, methods);
      router.all(path, claimErrors, refuseOtherMethods(methods));
    }
    methods.add(method);
    // Koa's router answers HEAD with the GET route.
    if (method === "GET") methods.add("HEAD");
  };
  return {
    get: (path, handler) => void (serve("GET", path), router.get(path, claimErrors, handler)),
    post: (path, handler, options) => void (serve("POST", path), router.post(path, claimErrors, options?.form ? readBodies.jsonOrForm : readBodies.json, handler)),
    delete: (path, handler) => void (serve("DELETE", path), router.delete(path, claimErrors, handler)),
  };
}

/**
 * A method the path does not serve: 405 with `Allow`, in the format's error shape (a Messages
 * client reads Anthropic's envelope even for `GET /v1/messages`). Another route whose pattern
 * also matches (`/x/:id` beside `/x/literal`) answers first; only what nothing answered is refused.
 */
function refuseOtherMethods(methods: ReadonlySet<string>): Middleware {
  return async (ctx, next) => {
    if (methods.has(ctx.method)) return next();
    await next();
    if (ctx.status !== 404 || ctx.body !== undefined) return;
    const allowed = [...methods].filter((method) => method !== "HEAD").join(", ");
    ctx.set("allow", [...methods].join(", "));
    throw routerError(Code.Unimplemented, "method_not_allowed", `${ctx.method} is not allowed on ${echoed(ctx.path)}; use ${allowed}.`);
  };
}

/**
 * The request's JSON body, once: the context lets it go (and its text), so
 * that a streamed answer, whose context lives as long as the stream, does not
 * keep the whole conversation it was asked with.
 */
export function takeBody(ctx: Context): unknown {
  const body: unknown = ctx.request.body;
  ctx.request.body = undefined;
  ctx.request.rawBody = undefined!;
  return body;
}
