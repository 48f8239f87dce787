// A text-only model entry of a test configuration, as the configuration file
// writes it: `test/<id>`, served by the providers given.

/** `test/<id>` (named `id`): 8192 tokens of context, at most 1000 completion tokens, text in and out. */
export function testTextModel(id: string, fields: { supported_parameters: string[]; providers: object[] }) {
  return {
    id: `test/${id}`,
    name: id,
    created: 1,
    creator: "test",
    context_length: 8192,
    max_completion_tokens: 1000,
    input_modalities: ["text"],
    output_modalities: ["text"],
    ...fields,
  };
}
