// MIME types of the media Gemini reads, from data URIs, audio formats and file names.

// Gemini's documented audio types are audio/wav, audio/mp3, audio/aiff, audio/aac,
// audio/ogg and audio/flac; other formats are named after themselves.
const AUDIO_TYPES: Record<string, string> = {
  wav: "audio/wav",
  mp3: "audio/mp3",
  mpeg: "audio/mp3",
  aiff: "audio/aiff",
  aac: "audio/aac",
  ogg: "audio/ogg",
  flac: "audio/flac",
  m4a: "audio/mp4",
  webm: "audio/webm",
};

export function audioMimeType(format: string): string {
  const name = format.toLowerCase();
  return AUDIO_TYPES[name] ?? `audio/${name}`;
}

const EXTENSION_TYPES: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  webp: "image/webp",
  gif: "image/gif",
  heic: "image/heic",
  heif: "image/heif",
  pdf: "application/pdf",
  txt: "text/plain",
  md: "text/markdown",
  html: "text/html",
  csv: "text/csv",
  xml: "text/xml",
  json: "application/json",
  wav: "audio/wav",
  mp3: "audio/mp3",
  flac: "audio/flac",
  ogg: "audio/ogg",
  mp4: "video/mp4",
  mov: "video/mov",
  webm: "video/webm",
};

/** The MIME type a file name or URL path suggests, if its extension is a known one. */
export function mimeTypeFromName(name: string): string | undefined {
  const path = name.split(/[?#]/)[0];
  const extension = /\.([A-Za-z0-9]+)$/.exec(path)?.[1]?.toLowerCase();
  return extension ? EXTENSION_TYPES[extension] : undefined;
}
