// What a video interaction keeps with its task (Task.stored_echo, opaque to the
// core): that an interaction made it, and the delivery it asked for, so that
// GET /v1/interactions/{id} shows the task as that interaction, its video as
// the create answered it. A task without it (POST /api/v1/videos, or an
// interaction with store: false) is not an interaction.

export type VideoDelivery = "inline" | "uri";

/** The echo's one key: it tells this format's echo from another's. */
const MARK = "interaction_video";

interface VideoEcho {
  delivery: VideoDelivery;
}

export function videoEcho(echo: VideoEcho): string {
  return JSON.stringify({ [MARK]: echo });
}

/** The echo a video interaction left on its task; undefined for any other task. */
export function videoEchoOf(storedEcho: string): VideoEcho | undefined {
  if (!storedEcho) return undefined;
  try {
    const echo = (JSON.parse(storedEcho) as Record<string, unknown>)[MARK] as Partial<VideoEcho> | undefined;
    if (typeof echo !== "object" || echo === null) return undefined;
    return { delivery: echo.delivery === "inline" ? "inline" : "uri" };
  } catch {
    return undefined;
  }
}
