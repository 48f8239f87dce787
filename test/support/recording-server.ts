// The HTTP server under every fake upstream: it records each request (path,
// headers, parsed JSON body), hands it to the protocol's answer function, and
// closes with its open connections cut.
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The body parsed as JSON; {} when it is empty or not JSON (multipart, binary: see `raw`). */
  body: Record<string, any>;
  raw: Buffer;
}

export interface FakeUpstream {
  url: string;
  requests: RecordedRequest[];
  /** Resolves when a "hang" request's connection closes (the abort reached us). */
  nextAbort(): Promise<void>;
  close(): Promise<void>;
}

/** `answer` gets the recorded request, the response, and a callback to call when a hung request is aborted. */
export type Answer = (request: RecordedRequest, res: http.ServerResponse, onAbort: () => void) => void;

export async function startRecordingServer(basePath: string, answer: Answer): Promise<FakeUpstream> {
  const requests: RecordedRequest[] = [];
  const abortWaiters: (() => void)[] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const request = { method: req.method ?? "GET", path: req.url ?? "", headers: req.headers, body: jsonOf(raw), raw };
    requests.push(request);
    answer(request, res, () => abortWaiters.shift()?.());
  });
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${basePath}`,
    requests,
    nextAbort: () => new Promise<void>((resolve) => abortWaiters.push(resolve)),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * Whether a request declares a JSON body (`application/json`, any parameters), as every
 * provider API insists: a body sent as text/plain is refused there, so it is here too.
 */
export function declaresJson(headers: http.IncomingHttpHeaders): boolean {
  return (headers["content-type"] ?? "").split(";")[0].trim().toLowerCase() === "application/json";
}

function jsonOf(raw: Buffer): Record<string, any> {
  try {
    return JSON.parse(raw.toString("utf8") || "{}") as Record<string, any>;
  } catch {
    return {};
  }
}
