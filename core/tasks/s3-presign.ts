// A presigned GET of one object (AWS Signature Version 4 in the query string,
// as S3's documentation "Authenticating Requests: Using Query Parameters"
// describes it), made with node:crypto: the URL downloads the object without
// credentials until it expires, so a signed asset link can hand the bytes to
// the bucket (tasks.s3.presigned_urls). The AWS SDK's own presigner is a
// separate package whose versions do not follow client-s3's.
import { createHash, createHmac } from "node:crypto";

export interface PresignCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface PresignRequest {
  /** The object's URL (its key already encoded, as rfc3986Path makes it). */
  objectUrl: URL;
  region: string;
  credentials: PresignCredentials;
  /** How long the URL works, in seconds: 1 to 604800 (a week, S3's most). */
  expiresSeconds: number;
  now: Date;
  /** Response overrides S3 applies to the answer (`response-content-type`, `response-content-disposition`). */
  query?: Record<string, string>;
}

/** S3's longest presigned URL life. */
export const PRESIGN_MAX_SECONDS = 7 * 24 * 60 * 60;

/** Encoded as SigV4 wants it: RFC 3986, only unreserved characters left as they are. */
const rfc3986 = (value: string) => encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** An object key as a URL path: each segment encoded, the slashes kept (S3 encodes a key once). */
export const rfc3986Path = (key: string) => key.split("/").map(rfc3986).join("/");

const hmac = (key: Buffer | string, data: string) => createHmac("sha256", key).update(data).digest();
const sha256Hex = (data: string) => createHash("sha256").update(data).digest("hex");

export function presignGetUrl(request: PresignRequest): string {
  const { objectUrl, region, credentials } = request;
  const stamp = request.now.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");
  const day = stamp.slice(0, 8);
  const scope = `${day}/${region}/s3/aws4_request`;
  const params: Record<string, string> = {
    ...request.query,
    "X-Amz-Algorithm": "AWS4-HMAC-SHA256",
    "X-Amz-Credential": `${credentials.accessKeyId}/${scope}`,
    "X-Amz-Date": stamp,
    "X-Amz-Expires": String(Math.max(1, Math.min(PRESIGN_MAX_SECONDS, Math.floor(request.expiresSeconds)))),
    "X-Amz-SignedHeaders": "host",
    ...(credentials.sessionToken ? { "X-Amz-Security-Token": credentials.sessionToken } : {}),
  };
  const query = Object.keys(params)
    .sort()
    .map((name) => `${rfc3986(name)}=${rfc3986(params[name])}`)
    .join("&");
  const canonical = ["GET", objectUrl.pathname, query, `host:${objectUrl.host}`, "", "host", "UNSIGNED-PAYLOAD"].join("\n");
  const toSign = ["AWS4-HMAC-SHA256", stamp, scope, sha256Hex(canonical)].join("\n");
  const key = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, day), region), "s3"), "aws4_request");
  const signature = createHmac("sha256", key).update(toSign).digest("hex");
  return `${objectUrl.origin}${objectUrl.pathname}?${query}&X-Amz-Signature=${signature}`;
}
