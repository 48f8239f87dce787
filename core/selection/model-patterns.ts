// The `selection.models` patterns: a catalogue id, or one with `*` for any run
// of characters (`anthropic/*`, `*-mini`). Matched without building a RegExp per request.

export function matchesPattern(id: string, pattern: string): boolean {
  const pieces = pattern.split("*");
  if (pieces.length === 1) return id === pattern;
  const first = pieces[0];
  const last = pieces[pieces.length - 1];
  if (!id.startsWith(first) || !id.endsWith(last) || id.length < first.length + last.length) return false;
  let at = first.length;
  const end = id.length - last.length;
  for (const piece of pieces.slice(1, -1)) {
    const found = id.indexOf(piece, at);
    if (found === -1 || found + piece.length > end) return false;
    at = found + piece.length;
  }
  return true;
}

export const matchesAnyPattern = (id: string, patterns: readonly string[]) => patterns.some((pattern) => matchesPattern(id, pattern));
