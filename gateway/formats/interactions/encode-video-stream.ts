// A video interaction's event stream, in the frames and event ids of the text
// stream (encode-stream.ts, event-position.ts): interaction.created and an
// interaction.status_update at once, another status_update (in_progress)
// every keep-alive while the video is made, then its one model output step
// (step.start, a step.delta per video, step.stop), interaction.completed with
// the whole interaction, and `data: [DONE]`. Each video is one piece of its
// step's content (its offset counts videos). A task that failed, or a wait
// that broke off, is the `error` event, as a text stream's failure is.
import type { Task } from "../../../gen/router/v1/tasks_pb.js";
import type { PublicError } from "../../errors/http-status.ts";
import type { SseEvent } from "../../sse.ts";
import { errorOf } from "./encode-error.ts";
import { encodeVideoInteraction, videoHead, type VideoContent } from "./encode-video.ts";
import { eventIdOf, type EventPosition } from "./event-position.ts";

export function createVideoStreamFrames(task: Task) {
  const frame = (eventType: string, fields: object, position: EventPosition): SseEvent => ({ data: JSON.stringify({ event_type: eventType, ...fields, event_id: eventIdOf(position) }) });
  const inProgress = () => frame("interaction.status_update", { interaction_id: task.id, status: "in_progress" }, { kind: "status" });
  return {
    opening(): SseEvent[] {
      const { id, model, created } = videoHead(task);
      return [frame("interaction.created", { interaction: { id, object: "interaction", status: "in_progress", model, created: created.toISOString() } }, { kind: "created" }), inProgress()];
    },
    alive: (): SseEvent[] => [inProgress()],
    completed(ended: Task, contents: VideoContent[]): SseEvent[] {
      return [
        frame("step.start", { index: 0, step: { type: "model_output" } }, { kind: "stepStart", step: 0 }),
        ...contents.map((delta, index) => frame("step.delta", { index: 0, delta }, { kind: "step", step: 0, offset: index + 1 })),
        frame("step.stop", { index: 0 }, { kind: "stepStop", step: 0 }),
        frame("interaction.completed", { interaction: encodeVideoInteraction(ended, contents) }, { kind: "completed" }),
        { data: "[DONE]" },
      ];
    },
    failed: (error: PublicError): SseEvent[] => [frame("error", { error: errorOf(error) }, { kind: "error" })],
  };
}
