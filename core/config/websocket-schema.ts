// The `responses_websocket` block of the configuration: the Responses API's
// WebSocket mode on GET /v1/responses (docs/responses.md, "WebSocket mode").
import { z } from "zod";
import { RESPONSES_WEBSOCKET_DEFAULTS as WEBSOCKET_DEFAULTS } from "../../wire/responses-websocket.ts";

export { WEBSOCKET_DEFAULTS };

export const websocketSchema = z
  .object({
    /** Off: an upgrade is answered 426, so a client (Codex) falls back to HTTP at once. */
    enabled: z.boolean().default(WEBSOCKET_DEFAULTS.enabled),
    /** The largest frame a client may send (a `response.create` carries a whole conversation); larger closes the socket (1009). */
    max_frame_bytes: z.number().int().positive().default(WEBSOCKET_DEFAULTS.max_frame_bytes),
    /** Responses one socket may carry; the next is refused with a close (1008), and the client opens another. */
    max_turns: z.number().int().positive().default(WEBSOCKET_DEFAULTS.max_turns),
    /** A socket with no turn running and no frame from the client for this long is closed (1000). */
    idle_seconds: z.number().int().positive().default(WEBSOCKET_DEFAULTS.idle_seconds),
    /** How often the gateway pings; a client that has not answered the last ping by the next is cut off. */
    ping_seconds: z.number().int().positive().default(WEBSOCKET_DEFAULTS.ping_seconds),
  })
  .strict();

export type WebsocketConfig = z.infer<typeof websocketSchema>;
