// The Responses WebSocket mode's settings (the configuration's
// `responses_websocket`, docs/configuration.md): shared by the core's
// configuration schema, which reads them, and the gateway, which serves them.

export interface ResponsesWebsocketSettings {
  /** Off: an upgrade is answered 426, so a client (Codex) falls back to HTTP at once. */
  enabled: boolean;
  /** The largest frame a client may send; larger closes the socket (1009). */
  max_frame_bytes: number;
  /** Responses one socket may carry; the next is refused with a close (1008). */
  max_turns: number;
  /** A socket with no turn running and no frame from the client for this long is closed (1000). */
  idle_seconds: number;
  /** How often the gateway pings; a client that has not answered the last ping by the next is cut off. */
  ping_seconds: number;
}

export const RESPONSES_WEBSOCKET_DEFAULTS: ResponsesWebsocketSettings = {
  enabled: true,
  max_frame_bytes: 32 * 1024 * 1024,
  max_turns: 1000,
  idle_seconds: 600,
  ping_seconds: 30,
};
