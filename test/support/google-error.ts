// The error answer of Google's APIs (generateContent and Interactions alike):
// `{error: {code, message, status}}`, `status` the canonical name of the code.
import type http from "node:http";

const STATUS_NAMES: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};

export function sendGoogleError(res: http.ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json; charset=UTF-8" });
  res.end(JSON.stringify({ error: { code: status, message, status: STATUS_NAMES[status] ?? "UNKNOWN" } }));
}
