// What a public format is to the app: its routes, and the shape of its error
// bodies. A new format is one folder exporting a GatewayFormat, plus one line
// in formats/index.ts.
import type Router from "@koa/router";
import type { RouterContext } from "@koa/router";
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
  encodeError(error: PublicError, requestId: string): unknown;
  /**
   * A header that carries the request id on every answer of this format's routes, errors
   * included (Anthropic's `request-id`, which its SDK reads), besides the app's `x-request-id`.
   */
  requestIdHeader?: string;
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
 * format's error encoder in `ctx.state.encodeError` (and sets its request-id
 * header), before anything can throw (the app's error middleware reads it),
 * a 405 of the path included; a POST route then reads its
 * body (`readBodies`), so an unreadable body is told in the format's own shape.
 * One router for every format keeps routing one match per request.
 */
export function formatRoutes(router: Router, format: GatewayFormat, readBodies: BodyReaders): FormatRoutes {
  const claimErrors = (ctx: Context) => {
    const requestId: string = ctx.state.requestId;
    ctx.state.encodeError = (error: PublicError) => format.encodeError(error, requestId);
    if (format.requestIdHeader) ctx.set(format.requestIdHeader, requestId);
  };
  // Each path once, before its methods' routes: its `all` route claims the errors and refuses a
  // method no route of the path serves, in this format's shape. Every route of the path comes after
  // it (the same pattern matches the same URLs), so the routes themselves need not claim again.
  const methodsOfPath = new Map<string, Set<string>>();
  const serve = (path: string, methods: readonly string[]) => {
    let served = methodsOfPath.get(path);
    if (!served) {
      served = new Set();
      methodsOfPath.set(path, served);
      router.all(path, refuseUnservedMethods(claimErrors, WRITTEN_OUT.test(path) ? served : undefined));
    }
    for (const method of methods) served.add(method);
  };
  return {
    get: (path, handler) => void (serve(path, ["GET", "HEAD"]), router.get(path, handler)),
    post: (path, handler, options) => void (serve(path, ["POST"]), router.post(path, options?.form ? readBodies.jsonOrForm : readBodies.json, handler)),
    delete: (path, handler) => void (serve(path, ["DELETE"]), router.delete(path, handler)),
  };
}

/** A path with no parameter (`/api/v1/chat/completions`): the most specific route of any URL it matches. */
const WRITTEN_OUT = /^[^:*(]*$/;

/** The refusing middlewares, whose `all` routes serve no method of their own. */
const refusals = new WeakSet<Middleware>();

/**
 * A method no route of the path serves: 405 with `Allow`, in the format's error shape (a
 * Messages client reads Anthropic's envelope even for `GET /v1/messages`). OPTIONS is answered
 * 204 with the same `Allow`. A path written out (`/images/generations`) owns its methods: a
 * pattern that also matches it (`GET /images/{id}`) does not serve it. `ownMethods`, given for a
 * path written out, are what its URL serves: a request for one of them (nearly every request)
 * goes on without looking at the other matching routes.
 */
function refuseUnservedMethods(claimErrors: (ctx: Context) => void, ownMethods: ReadonlySet<string> | undefined): Middleware {
  const refuse: Middleware = async (ctx, next) => {
    claimErrors(ctx);
    if (ownMethods?.has(ctx.method)) return next();
    const served = servedMethods(ctx);
    if (served.includes(ctx.method)) return next();
    ctx.set("allow", served.join(", "));
    if (ctx.method === "OPTIONS") {
      ctx.status = 204;
      return;
    }
    const use = served.filter((method) => method !== "HEAD").join(", ");
    throw routerError(Code.Unimplemented, "method_not_allowed", `${ctx.method} is not allowed on ${echoed(ctx.path)}; use ${use}.`);
  };
  refusals.add(refuse);
  return refuse;
}

const METHOD_ORDER = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"];

/**
 * What the most specific routes matching the request's path (those with the fewest parameters)
 * serve (HEAD with each GET, as Koa's router answers it), in a stable order.
 */
function servedMethods(ctx: Context): string[] {
  const layers = ((ctx as RouterContext).matched ?? []).filter((layer) => !layer.stack.some((middleware) => refusals.has(middleware as Middleware)));
  const fewest = Math.min(...layers.map((layer) => layer.paramNames.length));
  const served = new Set(layers.filter((layer) => layer.paramNames.length === fewest).flatMap((layer) => layer.methods));
  return [...METHOD_ORDER.filter((method) => served.has(method)), ...[...served].filter((method) => !METHOD_ORDER.includes(method))];
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
