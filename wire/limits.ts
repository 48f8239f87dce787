// Limits of the public API that the gateway checks when it decodes a request
// and the core checks again behind its own RPCs (a split deployment's core is
// called by more than this gateway): one number each.

/** The largest seed taken (images and videos): Veo's seed is a uint32, and the other providers' fit in it. */
export const MAX_SEED = 2 ** 32 - 1;

/** OpenAI's input_items list: 20 by default, at most 100. */
export const ITEMS_LIMIT_DEFAULT = 20;
export const ITEMS_LIMIT_MAX = 100;
