// The simulator's image jobs, so that `npm start` makes an image with no keys:
// a job is done at its first poll, its image a PNG of one colour drawn from
// the prompt and the seed (the same prompt and seed, the same colour), as large as `size` asks
// (256x256 by default), handed over as a data: URL. Stateless, so any
// instance polls it. A prompt containing "[fail]" ends failed, one containing
// "[moderate]" ends moderated, as the test fakes do.
import { createHash } from "node:crypto";
import { crc32, deflateSync } from "node:zlib";
import type { MediaJobAdapter } from "../media-job.ts";

const DEFAULT_SIDE = 256;

export function createSimulatorMediaAdapter(): MediaJobAdapter {
  return {
    maxImagesPerJob: 1,
    imageParameters: ["size", "seed"],
    async submitImage(_call, image) {
      const size = /^(\d+)x(\d+)$/.exec(image.size);
      // The seed picks the colour with the prompt: the same seed, the same image; another seed, another.
      const job = new URLSearchParams({ prompt: image.prompt, seed: image.seed === 0n ? "" : String(image.seed), width: size?.[1] ?? String(DEFAULT_SIDE), height: size?.[2] ?? String(DEFAULT_SIDE) });
      const id = createHash("sha256").update(job.toString()).digest("hex").slice(0, 32);
      return { jobId: id, pollingUrl: `simulator:image?${job}` };
    },
    async poll(_call, job) {
      const query = new URLSearchParams(job.pollingUrl.slice(job.pollingUrl.indexOf("?") + 1));
      const prompt = query.get("prompt") ?? "";
      if (prompt.includes("[fail]")) return { state: "failed", code: "upstream_error", message: "The simulator failed this image, as its prompt asked." };
      if (prompt.includes("[moderate]")) return { state: "failed", code: "content_moderated", message: "The simulator moderated this image, as its prompt asked." };
      const png = solidPng(Number(query.get("width")), Number(query.get("height")), colourOf(query.get("seed") ? `${query.get("seed")}\u0000${prompt}` : prompt));
      return { state: "succeeded", outputs: [{ url: `data:image/png;base64,${png.toString("base64")}` }] };
    },
  };
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
