// The gateway's view of the core: the typed Connect clients of its services.
// In one process they call the service objects directly (no serialization, no
// network: stack.md measured that hop); split, they speak Connect over HTTP/2.
import type { DescMessage, DescService } from "@bufbuild/protobuf";
import { create, isMessage } from "@bufbuild/protobuf";
import {
  createClient,
  createContextValues,
  createHandlerContext,
  type CallOptions,
  type Client,
  type ContextValues,
  type HandlerContext,
  type Interceptor,
  type ServiceImpl,
} from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { CatalogueService } from "../gen/router/v1/catalogue_pb.js";
import { ConversationService } from "../gen/router/v1/conversations_pb.js";
import { InferenceService } from "../gen/router/v1/inference_pb.js";
import { SelectionService } from "../gen/router/v1/selection_pb.js";
import { TaskService } from "../gen/router/v1/tasks_pb.js";
import type { Core } from "../core/create-core.ts";
import { Code, ConnectError, errorDetailOf, routerError } from "../core/errors.ts";

export interface CoreClient {
  inference: Client<typeof InferenceService>;
  catalogue: Client<typeof CatalogueService>;
  selection: Client<typeof SelectionService>;
  conversations: Client<typeof ConversationService>;
  tasks: Client<typeof TaskService>;
}

export function createInProcessCoreClient(core: Core): CoreClient {
  return {
    inference: directClient(InferenceService, core.services.inference),
    catalogue: directClient(CatalogueService, core.services.catalogue),
    selection: directClient(SelectionService, core.services.selection),
    conversations: directClient(ConversationService, core.services.conversations),
    tasks: directClient(TaskService, core.services.tasks),
  };
}

/** Why CORE_URL cannot be the core's address (one line for the operator), or undefined when it can. */
export function coreUrlProblem(value: string | undefined): string | undefined {
  if (!value) return "CORE_URL is required with start:gateway (for example http://127.0.0.1:50051)";
  const url = URL.parse(value);
  if (url?.protocol !== "http:" && url?.protocol !== "https:") {
    return `CORE_URL must be an http:// or https:// URL (for example http://127.0.0.1:50051), got ${JSON.stringify(value)}`;
  }
  return undefined;
}

export function createRemoteCoreClient(baseUrl: string): CoreClient {
  const transport = createConnectTransport({ baseUrl, httpVersion: "2", useBinaryFormat: true, interceptors: [coreUnavailable(baseUrl)] });
  return {
    inference: createClient(InferenceService, transport),
    catalogue: createClient(CatalogueService, transport),
    selection: createClient(SelectionService, transport),
    conversations: createClient(ConversationService, transport),
    tasks: createClient(TaskService, transport),
  };
}

/**
 * Errors the core did not make (no ErrorDetail: refused, reset, not HTTP/2, not
 * Connect, a wrong path) become core_unavailable, the transport's words kept in
 * the message for the log; unless our caller went away (the call's signal
 * aborted), which stays the transport's Canceled. Streams can fail while
 * their messages are read, so their iteration is wrapped too.
 */
function coreUnavailable(baseUrl: string): Interceptor {
  const translate = (error: unknown, signal: AbortSignal): unknown => {
    if (signal.aborted) return error;
    const connectError = ConnectError.from(error);
    if (errorDetailOf(connectError)) return error;
    return routerError(Code.Unavailable, "core_unavailable", `the core at ${baseUrl} did not answer: ${connectError.rawMessage}`, {
      retryAfterSeconds: 1,
      cause: error,
    });
  };
  return (next) => async (request) => {
    let response;
    try {
      response = await next(request);
    } catch (error) {
      throw translate(error, request.signal);
    }
    if (!response.stream) return response;
    const messages = response.message;
    return {
      ...response,
      message: {
        async *[Symbol.asyncIterator]() {
          try {
            yield* messages;
          } catch (error) {
            throw translate(error, request.signal);
          }
        },
      },
    };
  };
}

/** A client whose calls run the implementation in this process, as createClient's would remotely. */
function directClient<S extends DescService>(service: S, impl: ServiceImpl<S>): Client<S> {
  const client: Record<string, unknown> = {};
  for (const method of service.methods) {
    const handler = (impl as Record<string, (request: unknown, context: unknown) => unknown>)[method.localName].bind(impl);
    const url = `/${service.typeName}/${method.name}`;
    const context = (options: CallOptions | undefined): HandlerContext =>
      // A deadline needs Connect's own signal (a timer linked to the caller's).
      options?.timeoutMs !== undefined
        ? createHandlerContext({
            service,
            method,
            protocolName: "in-process",
            requestMethod: "POST",
            url,
            requestSignal: options.signal,
            requestHeader: options.headers,
            timeoutMs: options.timeoutMs,
          })
        : inProcessContext(service, method, url, options);
    // Callers may pass init objects as with a remote client; the handler wants messages.
    const message = (input: DescMessage, request: object) =>
      isMessage(request, input) ? request : create(input, request as Parameters<typeof create>[1]);
    client[method.localName] =
      method.methodKind === "unary"
        ? async (request: object, options?: CallOptions) => handler(message(method.input, request), context(options))
        : (request: object, options?: CallOptions) => handler(message(method.input, request), context(options));
  }
  return client as Client<S>;
}

const NEVER_ABORTED = new AbortController().signal;

/**
 * The handler context of a call without a deadline, made for the call's
 * lifetime at little cost: the caller's own signal (Connect's links a new
 * controller to it with listeners on both) and headers only when read. Every
 * streamed answer keeps its context until it ends.
 */
function inProcessContext(service: DescService, method: DescService["methods"][number], url: string, options: CallOptions | undefined): HandlerContext {
  let requestHeader: Headers | undefined;
  let responseHeader: Headers | undefined;
  let responseTrailer: Headers | undefined;
  let values: ContextValues | undefined;
  return {
    service,
    method,
    url,
    protocolName: "in-process",
    requestMethod: "POST",
    signal: options?.signal ?? NEVER_ABORTED,
    timeoutMs: () => undefined,
    get requestHeader() {
      return (requestHeader ??= new Headers(options?.headers));
    },
    get responseHeader() {
      return (responseHeader ??= new Headers());
    },
    get responseTrailer() {
      return (responseTrailer ??= new Headers());
    },
    get values() {
      return (values ??= createContextValues());
    },
  };
}
