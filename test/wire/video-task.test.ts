// The video result's four styles (the spec's provider families): the fields
// every style shares, where the provider family's own fields sit, and each
// style's words for queued, running, succeeded and failed tasks.
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { TaskKind, TaskSchema, TaskStatus, VideoResultStyle, type Task } from "../../gen/router/v1/tasks_pb.js";
import { encodeVideoTask } from "../../wire/video-task.ts";

const CREATED = Date.UTC(2026, 10, 1, 12, 0, 0);
const DONE = CREATED + 90_000;
const ORIGIN = "https://router.example";
const MP4 = Buffer.from("tiny mp4 bytes");

function task(style: VideoResultStyle, status: TaskStatus): Task {
  const succeeded = status === TaskStatus.SUCCEEDED;
  return create(TaskSchema, {
    id: "rtr_1",
    modelId: "vendor/video-1",
    kind: TaskKind.VIDEO,
    status,
    resultStyle: style,
    progress: status === TaskStatus.RUNNING ? 0.4 : 0,
    createdAt: timestampFromMs(CREATED),
    updatedAt: timestampFromMs(CREATED + 30_000),
    expiresAt: timestampFromMs(CREATED + 86_400_000),
    video: { prompt: "a wave", length: 5, size: "1280x720" },
    ...(succeeded
      ? {
          completedAt: timestampFromMs(DONE),
          outputs: [{ url: "https://cdn.example/v.mp4", mediaType: "video/mp4", upstreamId: "gen-9", durationSeconds: 5.042 }],
          usage: { videos: 1, videoSeconds: 6, cost: "0.6" },
          routerAssets: { status: "ready", urls: ["/api/v1/assets/rtr_1/0"], cachedAt: timestampFromMs(DONE), expiresAt: timestampFromMs(CREATED + 86_400_000) },
        }
      : {}),
    ...(status === TaskStatus.FAILED ? { error: { code: "content_moderated", message: "Failure to pass the risk control system" }, usage: { cost: "0" }, completedAt: timestampFromMs(DONE) } : {}),
    ...(status !== TaskStatus.SUCCEEDED && status !== TaskStatus.FAILED ? { routerAssets: { status: "pending" } } : {}),
  });
}

const URL0 = `${ORIGIN}/api/v1/assets/rtr_1/0`;
const encode = (style: VideoResultStyle, status: TaskStatus, assetBytes?: Uint8Array[]) => encodeVideoTask(task(style, status), { origin: ORIGIN, assetBytes }) as Record<string, any>;

describe("the video result's common fields", () => {
  it.each([VideoResultStyle.PROGRESS, VideoResultStyle.PER_GENERATION, VideoResultStyle.DATA, VideoResultStyle.BASE64])("style %i carries taskId, chat_id, code, message, router_assets and usage", (style) => {
    expect(encode(style, TaskStatus.QUEUED)).toMatchObject({ taskId: "rtr_1", chat_id: "rtr_1", code: "ok", message: "The video is queued.", model: "vendor/video-1", router_assets: { status: "pending", urls: [] } });
    expect(encode(style, TaskStatus.RUNNING)).toMatchObject({ code: "ok", message: "The video is being generated." });
    expect(encode(style, TaskStatus.SUCCEEDED)).toMatchObject({
      code: "ok",
      router_assets: { status: "ready", urls: [URL0], cached_at: new Date(DONE).toISOString() },
      usage: { videos: 1, video_seconds: 6, cost: 0.6 },
    });
    expect(encode(style, TaskStatus.FAILED)).toMatchObject({ code: "content_moderated", message: "Failure to pass the risk control system", usage: { cost: 0 } });
  });
});

describe("the progress style (OpenAI videos)", () => {
  it("is a video object with status and progress, completed at 100", () => {
    expect(encode(VideoResultStyle.PROGRESS, TaskStatus.QUEUED)).toMatchObject({ id: "rtr_1", object: "video", status: "queued", progress: 0, completed_at: null, error: null });
    expect(encode(VideoResultStyle.PROGRESS, TaskStatus.RUNNING)).toMatchObject({ status: "in_progress", progress: 40 });
    expect(encode(VideoResultStyle.PROGRESS, TaskStatus.SUCCEEDED)).toMatchObject({
      status: "completed",
      progress: 100,
      created_at: CREATED / 1000,
      completed_at: DONE / 1000,
      seconds: "5",
      size: "1280x720",
      prompt: "a wave",
    });
    expect(encode(VideoResultStyle.PROGRESS, TaskStatus.FAILED)).toMatchObject({ status: "failed", error: { code: "content_moderated", message: "Failure to pass the risk control system" } });
  });

  it("has every field of the official SDK's Video type, remixed_from_video_id null", () => {
    type SdkVideoField = keyof import("openai/resources/videos").Video;
    const fields: SdkVideoField[] = ["id", "completed_at", "created_at", "error", "expires_at", "model", "object", "progress", "prompt", "remixed_from_video_id", "seconds", "size", "status"];
    for (const status of [TaskStatus.QUEUED, TaskStatus.RUNNING, TaskStatus.SUCCEEDED, TaskStatus.FAILED]) {
      const video = encode(VideoResultStyle.PROGRESS, status);
      for (const field of fields) expect(video, field).toHaveProperty(field);
      expect(video.remixed_from_video_id).toBeNull();
    }
  });
});

describe("the per-generation style (Pollo)", () => {
  it("lists generations with id, dates, status (succeed when done), url and mediaType", () => {
    const done = encode(VideoResultStyle.PER_GENERATION, TaskStatus.SUCCEEDED);
    expect(done.status).toBe("succeed");
    expect(done.generations).toEqual([
      { id: "gen-9", createdDate: new Date(CREATED).toISOString(), updatedDate: new Date(DONE).toISOString(), status: "succeed", url: URL0, mediaType: "video", failMsg: null },
    ]);
    expect(encode(VideoResultStyle.PER_GENERATION, TaskStatus.QUEUED).generations).toEqual([expect.objectContaining({ id: "rtr_1-0", status: "waiting", url: null })]);
    expect(encode(VideoResultStyle.PER_GENERATION, TaskStatus.RUNNING).generations[0].status).toBe("processing");
    expect(encode(VideoResultStyle.PER_GENERATION, TaskStatus.FAILED).generations).toEqual([
      expect.objectContaining({ status: "failed", url: null, failMsg: "Failure to pass the risk control system" }),
    ]);
  });
});

describe("the data style (Kling)", () => {
  it("has data.status completed (Kling's succeed translated) and data.generations with duration and url", () => {
    const done = encode(VideoResultStyle.DATA, TaskStatus.SUCCEEDED);
    expect(done.status).toBe("completed");
    expect(done.data).toEqual({
      task_id: "rtr_1",
      status: "completed",
      status_msg: "",
      created_at: CREATED,
      updated_at: CREATED + 30_000,
      generations: [{ id: "gen-9", url: URL0, duration: "5.042" }],
    });
    expect(encode(VideoResultStyle.DATA, TaskStatus.QUEUED).data).toMatchObject({ status: "submitted", generations: [] });
    expect(encode(VideoResultStyle.DATA, TaskStatus.RUNNING).data.status).toBe("processing");
    expect(encode(VideoResultStyle.DATA, TaskStatus.FAILED).data).toMatchObject({ status: "failed", status_msg: "Failure to pass the risk control system" });
  });
});

describe("the base64 style (Vertex Veo)", () => {
  it("has data.status completed and each generation's bytesBase64Encoded read from the hosted asset", () => {
    const done = encode(VideoResultStyle.BASE64, TaskStatus.SUCCEEDED, [MP4]);
    expect(done.data).toEqual({ status: "completed", generations: [{ mimeType: "video/mp4", bytesBase64Encoded: MP4.toString("base64") }] });
    expect(done.router_assets.urls).toEqual([URL0]);
    // Without the bytes (the webhook's body) the generation says only its type.
    expect(encode(VideoResultStyle.BASE64, TaskStatus.SUCCEEDED).data.generations).toEqual([{ mimeType: "video/mp4" }]);
    expect(encode(VideoResultStyle.BASE64, TaskStatus.RUNNING).data).toEqual({ status: "running", generations: [] });
    expect(encode(VideoResultStyle.BASE64, TaskStatus.FAILED).data).toEqual({ status: "failed", generations: [] });
  });
});
