// The simulator's audio-generation model: a WAV tone whose pitch is derived
// from the prompt (the same prompt always sounds the same) and whose length is
// the requested duration, so the chat `prompt` and `duration` fields can be
// exercised offline end to end.
import { createHash } from "node:crypto";
import { upstreamHttpError } from "../types.ts";

const DEFAULT_CLIP_SECONDS = 5;
const MAX_CLIP_SECONDS = 60;
const SAMPLE_RATE = 8000;
/** Gemini counts 32 tokens per second of audio; the simulator bills its clips alike. */
export const AUDIO_TOKENS_PER_SECOND = 32;

export interface AudioClip {
  seconds: number;
  frequencyHz: number;
  /** One WAV file, split in one-second pieces as a streaming provider would send it. */
  pieces: Buffer[];
}

export function generateClip(prompt: string, durationSeconds: number | undefined): AudioClip {
  const seconds = durationSeconds ?? DEFAULT_CLIP_SECONDS;
  if (seconds > MAX_CLIP_SECONDS) {
    // As a real provider does: the request is refused, not silently shortened.
    throw upstreamHttpError(400, `duration must be at most ${MAX_CLIP_SECONDS} seconds`);
  }
  const frequencyHz = 220 + (createHash("sha256").update(prompt).digest().readUInt16BE(0) % 440);
  const samplesPerSecond = SAMPLE_RATE;
  const pieces = [wavHeader(seconds * samplesPerSecond)];
  for (let second = 0; second < seconds; second++) {
    const piece = Buffer.alloc(samplesPerSecond * 2);
    for (let i = 0; i < samplesPerSecond; i++) {
      const t = (second * samplesPerSecond + i) / SAMPLE_RATE;
      piece.writeInt16LE(Math.round(Math.sin(2 * Math.PI * frequencyHz * t) * 0.3 * 32767), i * 2);
    }
    pieces.push(piece);
  }
  return { seconds, frequencyHz, pieces };
}

/** RIFF header of 16-bit mono PCM. */
function wavHeader(sampleCount: number): Buffer {
  const dataBytes = sampleCount * 2;
  const header = Buffer.alloc(44);
  header.write("RIFF", 0, "ascii");
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write("WAVE", 8, "ascii");
  header.write("fmt ", 12, "ascii");
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(SAMPLE_RATE, 24);
  header.writeUInt32LE(SAMPLE_RATE * 2, 28); // byte rate
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write("data", 36, "ascii");
  header.writeUInt32LE(dataBytes, 40);
  return header;
}
