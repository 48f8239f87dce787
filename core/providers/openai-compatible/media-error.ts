// OpenAI's error answer on its media endpoints, `{"error": {message, type,
// param, code}}` (plus `moderation_details {moderation_stage}` on GPT image
// refusals; docs/media-protocols.md): the provider's words, and whether its
// safety system refused the request (before generating) or the output.
import { mediaJson, type MediaRequest } from "../media-http.ts";
import type { JobState } from "../media-job.ts";
import { UpstreamError } from "../types.ts";

export interface OpenAiErrorAnswer {
  status: number;
  message: string;
  code: string;
  /** `input` or `output` where the provider says (GPT image models), else empty. */
  moderationStage: string;
}

/** OpenAI's moderation codes: GPT image and video models' `moderation_blocked`, DALL-E's `content_policy_violation`. */
const MODERATION_CODES = new Set(["moderation_blocked", "content_policy_violation"]);

/** The error answer's fields; a body that is not OpenAI's shape keeps only its status. */
function readOpenAiError(status: number, text: string): OpenAiErrorAnswer {
  let error: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    if (parsed.error && typeof parsed.error === "object") error = parsed.error as Record<string, unknown>;
  } catch {
    // not JSON: the status says enough
  }
  const details = error.moderation_details as { moderation_stage?: unknown } | undefined;
  return {
    status,
    message: typeof error.message === "string" && error.message ? error.message : `the provider answered ${status}`,
    code: typeof error.code === "string" ? error.code : "",
    moderationStage: typeof details?.moderation_stage === "string" ? details.moderation_stage : "",
  };
}

const isModeration = (code: string | null | undefined) => MODERATION_CODES.has(code ?? "");

/** A job the provider refused or failed, with its words: moderation of the request, of the output, or any other failure. */
export function failedState(answer: Pick<OpenAiErrorAnswer, "code" | "message" | "moderationStage">, requestStage = false): JobState {
  if (!isModeration(answer.code)) return { state: "failed", code: "upstream_error", message: answer.message };
  const ofRequest = answer.moderationStage ? answer.moderationStage === "input" : requestStage;
  return { state: "failed", code: ofRequest ? "request_moderated" : "content_moderated", message: answer.message };
}

/** Which error statuses are the provider's final word for one kind of call; any other is thrown retryable (run-job.ts tries it again). */
export type FinalStatuses = (status: number) => boolean;

/** A submission: any 4xx but 408 and 429 (the request, the key, the credits); a 5xx or a network failure is "not now". */
export const SUBMISSION_REFUSALS: FinalStatuses = (status) => status >= 400 && status < 500 && status !== 408 && status !== 429;

/** A poll: the provider no longer knows the job (404) or will not say (401, 403); anything else may pass, and the job goes on meanwhile. */
export const POLL_REFUSALS: FinalStatuses = (status) => status === 401 || status === 403 || status === 404;

/**
 * mediaJson, with the provider's refusal kept: `{json}` for a 2xx answer,
 * `{refused}` for an error answer `isFinal` names; every other error answer,
 * and a network failure, is thrown as an UpstreamError to be tried again.
 */
export async function callOpenAiMedia(
  url: string,
  request: MediaRequest,
  isFinal: FinalStatuses,
): Promise<{ json: unknown; refused?: undefined } | { refused: OpenAiErrorAnswer; json?: undefined }> {
  let answer: OpenAiErrorAnswer | undefined;
  try {
    const json = await mediaJson(url, request, (status, text) => {
      answer = readOpenAiError(status, text);
      return `${status}: ${answer.message}`;
    });
    return { json };
  } catch (error) {
    if (answer && error instanceof UpstreamError && isFinal(answer.status)) return { refused: answer };
    throw error;
  }
}
