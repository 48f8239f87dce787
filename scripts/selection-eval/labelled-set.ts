// The labelled evaluation set of model selection (test/selection/): each prompt
// with the task tags, difficulty and acceptable models a person gave it. Read,
// checked and turned into what selectModel takes (hub messages and needs).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import { MessageSchema, Role, type Message } from "../../gen/router/v1/inference_pb.js";
import type { Catalogue } from "../../core/catalogue/catalogue.ts";
import type { SelectionNeeds } from "../../core/selection/select.ts";
import { DIFFICULTIES, TASK_TAGS } from "../../core/selection/tags.ts";

export const LABELLED_SET_DIR = fileURLToPath(new URL("../../test/selection/", import.meta.url));

/** One line of prompts.jsonl, as written. */
export interface LabelledLine {
  id: string;
  /** ISO 639-1 code of the prompt's language. */
  lang: string;
  tags: string[];
  difficulty: string;
  /** Group names of model-groups.json, or catalogue ids. */
  accept: string[];
  prompt: string;
  system?: string;
  /** A file under test/selection/ whose text follows the prompt (long code, long documents). */
  attach?: string;
  /** An image URL sent with the prompt: a vision request. */
  image?: string;
}

export interface LabelledPrompt extends LabelledLine {
  /** Everything the user sent, as one text (prompt, then the attachment). */
  text: string;
  messages: Message[];
  needs: SelectionNeeds;
  /** Catalogue ids, the groups expanded (image prompts: only the models that take images). */
  acceptable: Set<string>;
}

export interface LabelledSet {
  prompts: LabelledPrompt[];
  groups: Record<string, string[]>;
}

/** Reads the set and checks it against the catalogue: an unknown tag, group or model id is an error, not a silent miss. */
export function loadLabelledSet(catalogue: Catalogue, dir = LABELLED_SET_DIR): LabelledSet {
  const groups = (JSON.parse(readFileSync(join(dir, "model-groups.json"), "utf8")) as { groups: Record<string, string[]> }).groups;
  const problems: string[] = [];
  for (const [name, ids] of Object.entries(groups)) for (const id of ids) if (!catalogue.get(id)) problems.push(`group ${name}: ${id} is not in the catalogue`);
  const lines = readFileSync(join(dir, "prompts.jsonl"), "utf8").split("\n").filter((line) => line.trim() !== "");
  const seen = new Set<string>();
  const prompts = lines.map((line, index) => {
    const entry = JSON.parse(line) as LabelledLine;
    const where = `prompts.jsonl line ${index + 1} (${entry.id})`;
    if (seen.has(entry.id)) problems.push(`${where}: duplicate id`);
    seen.add(entry.id);
    for (const tag of entry.tags) if (!(TASK_TAGS as readonly string[]).includes(tag)) problems.push(`${where}: unknown tag ${tag}`);
    if (!(DIFFICULTIES as readonly string[]).includes(entry.difficulty)) problems.push(`${where}: unknown difficulty ${entry.difficulty}`);
    const acceptable = new Set<string>();
    for (const name of entry.accept) {
      const ids = groups[name] ?? (catalogue.get(name) ? [name] : undefined);
      if (!ids) problems.push(`${where}: ${name} is neither a group nor a catalogue id`);
      for (const id of ids ?? []) if (!entry.image || catalogue.get(id)?.config.input_modalities.includes("image")) acceptable.add(id);
    }
    if (acceptable.size === 0) problems.push(`${where}: accepts no model`);
    const text = entry.attach ? `${entry.prompt}\n\n${readFileSync(join(dir, entry.attach), "utf8")}` : entry.prompt;
    return { ...entry, text, messages: messagesOf(entry, text), needs: needsOf(entry), acceptable };
  });
  if (problems.length > 0) throw new Error(`the labelled selection set has problems:\n  ${problems.join("\n  ")}`);
  return { prompts, groups };
}

function messagesOf(entry: LabelledLine, text: string): Message[] {
  const textPart = (value: string) => ({ part: { case: "text" as const, value: { text: value } } });
  const imagePart = (url: string) => ({ part: { case: "image" as const, value: { url, detail: "auto" } } });
  const user = create(MessageSchema, { role: Role.USER, content: entry.image ? [textPart(text), imagePart(entry.image)] : [textPart(text)] });
  return entry.system ? [create(MessageSchema, { role: Role.SYSTEM, content: [textPart(entry.system)] }), user] : [user];
}

const needsOf = (entry: LabelledLine): SelectionNeeds => (entry.image ? { inputModalities: ["image"] } : {});
