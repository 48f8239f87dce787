// Every public format the gateway serves. A new format: its folder, and one line here.
// Formats never import each other: where one path takes another format's body (a video
// request at chat completions), the joint is made here.
import { catalogue } from "./catalogue/routes.ts";
import { chatCompletionsWith } from "./chat-completions/routes.ts";
import type { GatewayFormat } from "./format.ts";
import { generation } from "./generation/routes.ts";
import { images } from "./images/routes.ts";
import { interactions } from "./interactions/routes.ts";
import { messages } from "./messages/routes.ts";
import { responses } from "./responses/routes.ts";
import { selection } from "./selection/routes.ts";
import { selfService } from "./self-service/routes.ts";
import { answerVideoBody } from "./videos/chat-video.ts";
import { videos } from "./videos/routes.ts";

export const FORMATS: readonly GatewayFormat[] = [catalogue, chatCompletionsWith(answerVideoBody), generation, images, interactions, messages, responses, selection, selfService, videos];
