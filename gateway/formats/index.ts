// Every public format the gateway serves. A new format: its folder, and one line here.
import { catalogue } from "./catalogue/routes.ts";
import { chatCompletions } from "./chat-completions/routes.ts";
import type { GatewayFormat } from "./format.ts";
import { generation } from "./generation/routes.ts";
import { images } from "./images/routes.ts";
import { messages } from "./messages/routes.ts";
import { responses } from "./responses/routes.ts";
import { selfService } from "./self-service/routes.ts";
import { videos } from "./videos/routes.ts";

export const FORMATS: readonly GatewayFormat[] = [catalogue, chatCompletions, generation, images, messages, responses, selfService, videos];
