// The part of a request the semantic cache compares (docs/cache.md, "The
// key"): the messages `conversation_mode` selects, exactly for the exact
// match; for a similar match, the last of them by the similarity of its words
// and the ones before it exactly. System and developer messages are not part
// of it: they are in the partition, always.
import { createHash } from "node:crypto";
import { toJson } from "@bufbuild/protobuf";
import { MessageSchema, Role, type ContentPart, type Message } from "../../gen/router/v1/inference_pb.js";
import { canonicalJson } from "./canonical-json.ts";

export type ConversationMode = "full_conversation" | "last_message_only" | "last_n_turns";

export interface SelectedPrompt {
  /** The last selected message's words, after its role: what the embedding compares. */
  text: string;
  /** SHA-256 hex of the selected messages, exactly (breakpoints left out). */
  exactDigest: string;
  /**
   * SHA-256 hex of what must be equal besides the words compared, or "" when
   * nothing is: the selected messages before the last (compared exactly: a
   * long conversation is similar as a whole to one whose first question was
   * another), and what the last one's text leaves out (images, audio, files,
   * blocks of the format's own: the same words about another image are
   * another question).
   */
  contextDigest: string;
}

export const isInstruction = (message: Message) => message.role === Role.SYSTEM || message.role === Role.DEVELOPER;

/** The messages the mode selects among the conversation's (instructions left out). */
function selectMessages(messages: readonly Message[], mode: ConversationMode, lastNTurns: number): Message[] {
  const conversation = messages.filter((message) => !isInstruction(message));
  switch (mode) {
    case "last_message_only":
      return conversation.slice(-1);
    case "last_n_turns": {
      // A turn starts at a user message: the last N of them and all that follows.
      let turns = 0;
      for (let index = conversation.length - 1; index >= 0; index--) {
        if (conversation[index].role === Role.USER && ++turns === lastNTurns) return conversation.slice(index);
      }
      return conversation;
    }
    case "full_conversation":
      return conversation;
  }
}

export function selectPrompt(messages: readonly Message[], mode: ConversationMode, lastNTurns: number): SelectedPrompt {
  const selected = selectMessages(messages, mode, lastNTurns);
  const exact = createHash("sha256");
  const context = createHash("sha256");
  let hasContext = false;
  let text = "";
  for (const [index, message] of selected.entries()) {
    const json = messageJson(message);
    exact.update(json).update("\n");
    if (index < selected.length - 1) {
      context.update(json).update("\n");
      hasContext = true;
      continue;
    }
    const words: string[] = [];
    for (const part of message.content) {
      const partWords = wordsOf(part);
      if (partWords === undefined) {
        context.update(messageJson({ ...message, content: [part] })).update("\n");
        hasContext = true;
      } else if (partWords) words.push(partWords);
    }
    text = `${Role[message.role].toLowerCase()}: ${words.join("\n")}`;
  }
  return { text, exactDigest: exact.digest("hex"), contextDigest: hasContext ? context.digest("hex") : "" };
}

/** A message as canonical JSON, its breakpoints left out (they change no answer). */
const messageJson = (message: Message) => canonicalJson(toJson(MessageSchema, { ...message, content: message.content.map((part) => ({ ...part, cacheControl: undefined })) }));

/** A part's words; undefined for a part that has none to compare (media, the format's own blocks). Reasoning is not the prompt's: "". */
function wordsOf(part: ContentPart): string | undefined {
  const { part: value } = part;
  switch (value.case) {
    case "text":
      return value.value.text;
    case "toolCall":
      return `${value.value.name}(${value.value.arguments || canonicalJson(value.value.input ?? {})})`;
    case "toolResult": {
      // A result holding media is compared exactly, as a whole, with the media.
      const inner = value.value.content.map(wordsOf);
      return inner.includes(undefined) ? undefined : inner.join("\n");
    }
    case "reasoning":
      return "";
    default:
      return undefined;
  }
}
