// Data URIs as the public formats receive files (`data:application/pdf;base64,...`).

/** The media type of a data URI; empty for bare base64 or anything else. */
export function mediaTypeOfDataUri(fileData: string): string {
  return /^data:([^;,]+)[;,]/.exec(fileData)?.[1] ?? "";
}
