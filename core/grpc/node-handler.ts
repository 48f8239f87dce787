// The core's HTTP/2 request handler: connect-node's adapter (connectNodeAdapter)
// with one difference in what it logs. The adapter logs every failure to write
// an answer with console.error, unless it is a Connect `Aborted`; but a caller
// that cancels a server stream (the gateway's client leaving mid-download of
// an asset, or mid-way through a streamed answer) resets the HTTP/2 stream,
// and the next write fails with ECANCELED: the caller's choice, not a fault.
// Those are a debug line here; any other failure is still an error line.
import http2 from "node:http2";
import { Code, ConnectError, createConnectRouter, type ConnectRouter } from "@connectrpc/connect";
import { compressionBrotli, compressionGzip, universalRequestFromNodeRequest, universalResponseToNodeResponse } from "@connectrpc/connect-node";

/** Where the handler's lines go: a pino logger, or the console. */
export interface HandlerLog {
  debug(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

const CONSOLE_LOG: HandlerLog = {
  debug: () => {},
  error: (fields, message) => console.error(message, fields),
};

export function coreRequestHandler(routes: (router: ConnectRouter) => void, log: HandlerLog = CONSOLE_LOG) {
  // The adapter's defaults.
  const router = createConnectRouter({ acceptCompression: [compressionGzip, compressionBrotli] });
  routes(router);
  const paths = new Map(router.handlers.map((handler) => [handler.requestPath, handler]));
  return (request: http2.Http2ServerRequest, response: http2.Http2ServerResponse) => {
    const handler = paths.get(request.url.split("?", 2)[0]);
    if (!handler) {
      response.writeHead(404);
      response.end();
      return;
    }
    handler(universalRequestFromNodeRequest(readableAuthority(request), response, undefined, undefined))
      .then((answer) => universalResponseToNodeResponse(answer, response))
      .catch((reason: unknown) => {
        if (ConnectError.from(reason).code === Code.Aborted) return;
        const rpc = `${handler.service.typeName}/${handler.method.name}`;
        if (cancelledByCaller(response)) log.debug({ rpc, err: reason }, "the caller cancelled the call while it was answered");
        else log.error({ rpc, err: reason }, `handler for rpc ${rpc} failed`);
      });
  };
}

/**
 * The adapter builds the request's URL from its :authority, and throws, out of this handler and
 * so out of the process, for one that is no URL's: an IPv6 address without brackets (`::1:50051`,
 * what Node's http2.connect sends for `http://[::1]:50051`), or none. No handler reads that URL:
 * such an authority is replaced, so that any caller is answered and none ends the core.
 */
function readableAuthority(request: http2.Http2ServerRequest): http2.Http2ServerRequest {
  const authority = request.headers[":authority"];
  if (typeof authority !== "string" || !URL.canParse(`http://${authority}`)) request.headers[":authority"] = "core.invalid";
  return request;
}

/** The caller reset the call's stream with CANCEL (what gRPC and Connect clients send when they stop a call). */
function cancelledByCaller(response: http2.Http2ServerResponse): boolean {
  return response.stream.rstCode === http2.constants.NGHTTP2_CANCEL;
}
