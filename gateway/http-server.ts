// The gateway's HTTP server: Koa's app.listen(), plus an answer in the spec's
// error shape for a request Node's HTTP parser rejects before Koa sees it (a
// bad chunk size, a malformed request line), instead of Node's bare
// "400 Bad Request" with no body. Every server of the gateway (main.ts, the
// test harness) is made here.
import http, { type Server } from "node:http";
import type { Duplex } from "node:stream";
import type { GatewayApp } from "./app.ts";

const BAD_REQUEST_BODY = JSON.stringify({
  error: { message: "The request could not be parsed as HTTP.", type: "invalid_request_error", param: null, code: "bad_request" },
});

/** `app.listen(port, host)` with parse failures answered as JSON, and WebSocket upgrades handed to the app. */
export function listenGateway(app: GatewayApp, port: number, host: string): Server {
  const server = http.createServer(app.callback());
  server.on("clientError", answerClientError);
  // The Responses WebSocket mode, on the same server and port as every route.
  server.on("upgrade", app.sockets.handleUpgrade);
  return server.listen(port, host);
}

/** Node's default clientError handling, with our body for a request that could not be parsed. */
function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  // A connection reset or closed has no one to answer, and one whose response has begun cannot get another.
  const response = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage;
  if (error.code === "ECONNRESET" || !socket.writable || response?.headersSent) {
    socket.destroy();
    return;
  }
  socket.end(rawResponse(error.code), () => socket.destroy());
}

/** Node's own answers to headers too large and a request too slow keep their statuses; a parse failure gets our body. */
function rawResponse(code: string | undefined): string {
  if (code === "HPE_HEADER_OVERFLOW") return "HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n";
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") return "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n";
  return (
    "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\n" +
    `Content-Length: ${Buffer.byteLength(BAD_REQUEST_BODY)}\r\nConnection: close\r\n\r\n${BAD_REQUEST_BODY}`
  );
}
