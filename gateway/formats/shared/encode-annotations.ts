// Sources an answer cites, in OpenAI's `annotations` shape (`url_citation`) and
// as the spec's top-level `citations` list.
import type { Annotation } from "../../../gen/router/v1/inference_pb.js";

/**
 * A cited source's fields as OpenAI's formats name them. Without a known range
 * the citation covers the whole text (OpenAI's schemas require both indexes).
 */
export function citationFields(annotation: Annotation, textLength: number) {
  return { url: annotation.url, title: annotation.title, start_index: annotation.startIndex ?? 0, end_index: annotation.endIndex ?? textLength };
}

export function encodeAnnotation(annotation: Annotation, textLength: number) {
  const cited = citationFields(annotation, textLength);
  return { type: "url_citation", url_citation: annotation.content ? { ...cited, content: annotation.content } : cited };
}

/** A citation inside a stream chunk: indexes only when the provider gave them. */
export function encodeStreamedAnnotation(annotation: Annotation) {
  const { url, title, startIndex, endIndex, content } = annotation;
  return {
    type: "url_citation",
    url_citation: { url, title, ...(startIndex !== undefined && { start_index: startIndex }), ...(endIndex !== undefined && { end_index: endIndex }), ...(content && { content }) },
  };
}

/** One entry per distinct URL, in the order first cited; null when none (the spec). */
export function encodeCitations(annotations: Annotation[]) {
  if (annotations.length === 0) return null;
  const byUrl = new Map<string, { url: string; title: string }>();
  for (const { url, title } of annotations) if (!byUrl.has(url)) byUrl.set(url, { url, title });
  return [...byUrl.values()];
}
