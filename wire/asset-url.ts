// A hosted asset's URL as answers show it: the core's signed path made
// absolute with the gateway's origin, or, where the core answered the
// bucket's own presigned URL (tasks.s3.presigned_urls: direct), that URL.
export const absoluteAssetUrl = (origin: string, url: string) => (/^https?:\/\//.test(url) ? url : origin + url);
