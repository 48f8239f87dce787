// Data URIs, the form media take in chat requests (`data:image/png;base64,...`).

/** `data:<mime>;base64,<data>` split, or undefined when the text is no base64 data URI. */
export function parseDataUri(uri: string): { mimeType: string; data: string } | undefined {
  const match = /^data:([^;,]+)(?:;[^;,]*)*;base64,(.*)$/s.exec(uri);
  return match ? { mimeType: match[1], data: match[2] } : undefined;
}
