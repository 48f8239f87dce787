// The media types a hosted asset is served as (docs/tasks.md, "Hosted assets"):
// the core stores only these (read from the bytes' signatures) and the gateway
// serves only these inline.

export type ImageType = "image/png" | "image/jpeg" | "image/webp" | "image/gif";
export type VideoType = "video/mp4" | "video/webm" | "video/quicktime";

/** Every media type a hosted asset may be served as. */
export const HOSTED_MEDIA_TYPES: ReadonlySet<string> = new Set<ImageType | VideoType>([
  "image/png",
  "image/jpeg",
  "image/webp",
  "image/gif",
  "video/mp4",
  "video/webm",
  "video/quicktime",
]);
