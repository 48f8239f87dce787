// Shared by the media formats (images, videos): where the caller reached the gateway.
import type { Context } from "koa";

/** The gateway's own scheme and host as the caller reached it: hosted asset URLs are made absolute with it. */
export const originOf = (ctx: Context) => `${ctx.protocol}://${ctx.host}`;
