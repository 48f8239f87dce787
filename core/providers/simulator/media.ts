// The simulator's image and video jobs, so that `npm start` makes an image
// and a video with no keys. A job is done at its first poll. Its image is a
// PNG of one colour drawn from the prompt and the seed (the same prompt and
// seed, the same colour), as large as `size` asks (256x256 by default), handed
// over as a data: URL; its video a tiny MP4 (mp4.ts) as long as `seconds`
// asks (4 by default) whose data is drawn from the prompt, the seed, the size
// and the input image's URL, handed over inline, and shown in the progress
// style. Stateless, so any instance polls it. A prompt containing "[fail]"
// ends failed, one containing "[moderate]" ends moderated, as the test fakes do.
import { createHash } from "node:crypto";
import { crc32, deflateSync } from "node:zlib";
import { VideoResultStyle } from "../../../gen/router/v1/tasks_pb.js";
import { dimensionsOfSize, type JobState, type MediaJobAdapter } from "../media-job.ts";
import { tinyMp4 } from "./mp4.ts";

const DEFAULT_SIDE = 256;
/** A video's length when `seconds` is not given (as OpenAI's videos API). */
const DEFAULT_VIDEO_SECONDS = 4;

export function createSimulatorMediaAdapter(): MediaJobAdapter {
  return {
    maxImagesPerJob: 1,
    imageParameters: ["size", "seed"],
    videoParameters: ["image", "seconds", "size", "seed"],
    videoResultStyle: VideoResultStyle.PROGRESS,
    async submitImage(_call, image) {
      const size = dimensionsOfSize(image.size);
      // The seed picks the colour with the prompt: the same seed, the same image; another seed, another.
      const job = new URLSearchParams({ prompt: image.prompt, seed: image.seed === undefined ? "" : String(image.seed), width: String(size?.width ?? DEFAULT_SIDE), height: String(size?.height ?? DEFAULT_SIDE) });
      return { jobId: jobIdOf(job), pollingUrl: `simulator:image?${job}` };
    },
    async submitVideo(_call, video) {
      const job = new URLSearchParams({
        prompt: video.prompt,
        seed: video.seed === undefined ? "" : String(video.seed),
        seconds: String(video.seconds || DEFAULT_VIDEO_SECONDS),
        size: video.size,
        image: video.imageUrl,
      });
      return { jobId: jobIdOf(job), pollingUrl: `simulator:video?${job}` };
    },
    async poll(_call, job) {
      const query = new URLSearchParams(job.pollingUrl.slice(job.pollingUrl.indexOf("?") + 1));
      const kind = job.pollingUrl.startsWith("simulator:video") ? "video" : "image";
      const prompt = query.get("prompt") ?? "";
      if (prompt.includes("[fail]")) return { state: "failed", code: "upstream_error", message: `The simulator failed this ${kind}, as its prompt asked.` };
      if (prompt.includes("[moderate]")) return { state: "failed", code: "content_moderated", message: `The simulator moderated this ${kind}, as its prompt asked.` };
      if (kind === "video") return videoOf(query);
      const png = solidPng(Number(query.get("width")), Number(query.get("height")), colourOf(query.get("seed") ? `${query.get("seed")}\u0000${prompt}` : prompt));
      return { state: "succeeded", outputs: [{ url: `data:image/png;base64,${png.toString("base64")}` }] };
    },
  };
}

const jobIdOf = (job: URLSearchParams) => createHash("sha256").update(job.toString()).digest("hex").slice(0, 32);

/** The video a job's parameters make: the same parameters, the same bytes. */
function videoOf(query: URLSearchParams): JobState {
  const seconds = Number(query.get("seconds"));
  const payload = createHash("sha256").update(query.toString()).digest();
  return { state: "succeeded", outputs: [{ bytes: tinyMp4({ seconds, payload }), mediaType: "video/mp4", durationSeconds: seconds }] };
}

function colourOf(prompt: string): Buffer {
  return createHash("sha256").update(prompt).digest().subarray(0, 3);
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

/** An RGB PNG of one colour (every scanline: filter byte 0, then the pixels). */
export function solidPng(width: number, height: number, rgb: Buffer): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.writeUInt8(8, 8);
  header.writeUInt8(2, 9);
  const scanline = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 3).fill(rgb)]);
  const pixels = Buffer.concat(Array.from({ length: height }, () => scanline));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", header), chunk("IDAT", deflateSync(pixels)), chunk("IEND", Buffer.alloc(0))]);
}
