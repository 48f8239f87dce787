// What one Responses WebSocket remembers between its turns: its last answer's
// input and output items, so the next turn may name it by
// `previous_response_id` and send only its new items, even when the answer
// was not stored (`store: false`, as Codex sends). That is OpenAI's
// connection-scoped state in this mode; a stored answer is continued by the
// core as over HTTP.
import { unixSeconds } from "./encode-response.ts";

type Item = unknown;

/** A turn's body with the socket's last answer put before its own input, and that whole input. */
export interface ExpandedTurn {
  body: Record<string, unknown>;
  /** The turn's whole input, as the next turn continues it. */
  input: Item[];
}

interface LastAnswer {
  id: string;
  input: Item[];
  output: Item[];
}

export class SocketConversation {
  /** The socket's last answer that was not stored; a stored one the core continues. */
  private last: LastAnswer | undefined;

  expand(body: Record<string, unknown>): ExpandedTurn {
    const own = inputItems(body.input);
    const { last } = this;
    if (last && body.previous_response_id === last.id) {
      const { previous_response_id: _continued, ...rest } = body;
      const input = [...last.input, ...last.output, ...own];
      return { body: { ...rest, input }, input };
    }
    return { body, input: own };
  }

  /** Watches a turn's frames; its completed answer becomes the one the next turn may continue. */
  recorder(turn: ExpandedTurn, stored: boolean): (frame: string) => void {
    // Only the completed answer is read (once per turn): the encoder writes `type` first.
    return (frame) => {
      if (!frame.startsWith('{"type":"response.completed"')) return;
      const { response } = JSON.parse(frame) as { response: { id: string; output: Item[] } };
      this.last = stored ? undefined : { id: response.id, input: turn.input, output: response.output };
    };
  }

  /**
   * A warm-up (`generate: false`): Codex opens a socket with the conversation
   * so far and no answer wanted, then continues from its id. Answered at once
   * with an empty completed response; no model runs and nothing is charged.
   */
  warmUp(turn: ExpandedTurn, id: string): string[] {
    const createdAt = unixSeconds();
    const response = { id, object: "response", created_at: createdAt, model: turn.body.model ?? null, output: [], error: null, incomplete_details: null };
    this.last = { id, input: turn.input, output: [] };
    return [
      JSON.stringify({ type: "response.created", sequence_number: 0, response: { ...response, status: "in_progress" } }),
      JSON.stringify({
        type: "response.completed",
        sequence_number: 1,
        response: { ...response, status: "completed", completed_at: createdAt, usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 } },
      }),
    ];
  }
}

/** A Responses `input` as items: a string is one user message. */
function inputItems(input: unknown): Item[] {
  if (input === undefined) return [];
  if (typeof input === "string") return [{ role: "user", content: input }];
  return Array.isArray(input) ? input : [input];
}
