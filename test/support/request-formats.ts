// The formats a core test's GenerateRequest says it came in through, with the
// policy each format's decoder sets (format_policy).
import { CHAT_COMPLETIONS } from "../../gateway/formats/chat-completions/decode-request.ts";
import { INTERACTIONS } from "../../gateway/formats/interactions/decode-request.ts";
import { MESSAGES } from "../../gateway/formats/messages/decode-request.ts";
import { RESPONSES } from "../../gateway/formats/responses/decode-request.ts";
import type { RequestFormat } from "../../gateway/router-fields.ts";

const asFields = ({ format, policy }: RequestFormat) => ({ format, formatPolicy: policy });

/** GenerateRequest fields: `format` and `formatPolicy`, as each format's decoder sets them. */
export const FORMAT_FIELDS = {
  chatCompletions: asFields(CHAT_COMPLETIONS),
  responses: asFields(RESPONSES),
  messages: asFields(MESSAGES),
  interactions: asFields(INTERACTIONS),
};
