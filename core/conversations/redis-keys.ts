// Every Redis key name of the conversation store, in one place (docs rule 2).
//
// A turn is the hash `<prefix>conv:<organisation>:<turn id>`. The organisation
// is URI-encoded, so it holds no ':' and two (organisation, id) pairs never
// share a name; the id comes last, so the chain script builds the names of an
// organisation's turns as its base (`turnBase`) followed by an id.

export const DEFAULT_REDIS_PREFIX = "rtr:";

export interface ConversationRedisKeys {
  /**
   * Hash {turn: the Turn as JSON, previous: the previous turn's id, expires:
   * the expiry in ms a continuation renewed it to, once one has, cancel: "1"
   * once a background answer's cancellation was requested}.
   */
  turn(organizationId: string, id: string): string;
  /** The name of the organisation's turns without the id: `turn(o, id) === turnBase(o) + id`. */
  turnBase(organizationId: string): string;
  /** String: the id of the turn whose provider keeps it under `upstreamId` (Turn.upstream_id), expiring with it. */
  upstream(organizationId: string, upstreamId: string): string;
}

export function conversationRedisKeys(prefix: string = DEFAULT_REDIS_PREFIX): ConversationRedisKeys {
  const turnBase = (organizationId: string) => `${prefix}conv:${encodeURIComponent(organizationId)}:`;
  return {
    turn: (organizationId, id) => turnBase(organizationId) + id,
    turnBase,
    upstream: (organizationId, upstreamId) => `${prefix}conv-upstream:${encodeURIComponent(organizationId)}:${upstreamId}`,
  };
}
