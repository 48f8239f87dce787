// URLs a caller gives (input images, webhooks) are fetched from the core's
// network: unless the deployment allows it (tasks.fetch_private_urls), no
// connection goes to a loopback, private, link-local, unique-local, shared,
// multicast or unspecified address. The check is in the connection itself
// (the resolved addresses of every connection, and IP literals), so a host
// that resolves to a public address when checked and a private one when
// connected (DNS rebinding) is refused too, and so is every redirect hop.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from "node:dns";
import { BlockList, isIP } from "node:net";
import { Agent, buildConnector, fetch, type RequestInit, type Response } from "undici";
import { readCapped } from "./read-capped.ts";

const refusedRanges = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8], // "this network", the unspecified address
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // shared (carrier-grade NAT)
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata (169.254.169.254)
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const) {
  refusedRanges.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 96], // unspecified, loopback (::1), IPv4-compatible
  ["fc00::", 7], // unique-local
  ["fe80::", 10], // link-local
  ["ff00::", 8], // multicast
] as const) {
  refusedRanges.addSubnet(network, prefix, "ipv6");
}
const nat64 = new BlockList();
nat64.addSubnet("64:ff9b::", 96, "ipv6");

/** Whether a connection may go to this IP address (IPv4-mapped and NAT64 IPv6 addresses judged by their IPv4 address). */
function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !refusedRanges.check(address, "ipv4");
  if (family !== 6) return false;
  // BlockList matches IPv4-mapped addresses (::ffff:a.b.c.d) against the IPv4 ranges itself.
  if (refusedRanges.check(address, "ipv6")) return false;
  if (nat64.check(address, "ipv6")) return isPublicAddress(embeddedIpv4(address));
  return true;
}

/**
 * Whether a URL names a private host outright: an IP literal outside the public
 * ranges, or localhost. A name that resolves to a private address is caught
 * only when connecting (fetchCallerUrl), where DNS rebinding cannot slip past.
 */
export function namesPrivateHost(url: URL): boolean {
  // A fully qualified name's final dot (`localhost.`) names the same host.
  const host = url.hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "");
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  return isIP(host) !== 0 && !isPublicAddress(host);
}

/** The last 32 bits of an IPv6 address, as IPv4. */
function embeddedIpv4(address: string): string {
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (dotted) return dotted[1];
  // "::" stands for the zero groups left out; the last two groups are the IPv4 address.
  const [head, tail] = address.includes("::") ? address.split("::") : ["", address];
  const groups = [...(head ? head.split(":") : []), ...(tail ? tail.split(":") : [])];
  const last = address.endsWith("::") ? [0, 0] : [...Array(2).fill("0"), ...groups].slice(-2).map((group) => parseInt(group, 16));
  return [last[0] >> 8, last[0] & 255, last[1] >> 8, last[1] & 255].join(".");
}

/**
 * A URL as the log may show it: its origin and path, without the query (a
 * signed URL's signature, a token) or the user and password.
 */
export function loggableUrl(url: string): string {
  const parsed = URL.parse(url);
  return parsed ? parsed.origin + parsed.pathname : "(not a URL)";
}

/** Why a caller's URL was not fetched; the message is for the log, never for the caller (its URLs are loggableUrl's). */
export class CallerUrlError extends Error {
  readonly failure: "private_address" | "redirect" | "status" | "too_large" | "network" | "timeout";
  readonly status: number | undefined;

  constructor(failure: CallerUrlError["failure"], message: string, status?: number, options?: ErrorOptions) {
    super(message, options);
    this.name = "CallerUrlError";
    this.failure = failure;
    this.status = status;
  }

  /** Worth trying again later: the host did not answer, or answered a status that may pass. */
  get retryable(): boolean {
    if (this.failure === "network" || this.failure === "timeout") return true;
    return this.failure === "status" && (this.status === 408 || this.status === 429 || (this.status ?? 0) >= 500);
  }
}

class PrivateAddressError extends Error {
  constructor(address: string) {
    super(`${address} is not a public address`);
    this.name = "PrivateAddressError";
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** dns.lookup, refusing the host when any of its addresses is not allowed. */
const checkedLookup = (isAllowed: (address: string) => boolean) => (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback) => {
  dnsLookup(hostname, { ...options, all: true } as LookupAllOptions, (error, addresses) => {
    if (error) return callback(error, []);
    const refused = addresses.find((entry) => !isAllowed(entry.address));
    if (refused) return callback(new PrivateAddressError(refused.address), []);
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
};

/** Connections to allowed addresses only: an IP literal is checked here (it is never looked up), a host name in its lookup. */
function filteringAgent(isAllowed: (address: string) => boolean): Agent {
  const connect = buildConnector({ lookup: checkedLookup(isAllowed) } as buildConnector.BuildOptions);
  return new Agent({
    connect(options, callback) {
      const literal = options.hostname.replace(/^\[|\]$/g, "");
      if (isIP(literal) && !isAllowed(literal)) return callback(new PrivateAddressError(literal), null);
      return connect(options, callback);
    },
  });
}

const agents = new WeakMap<(address: string) => boolean, Agent>();
const agentFor = (isAllowed: (address: string) => boolean) => agents.get(isAllowed) ?? agents.set(isAllowed, filteringAgent(isAllowed)).get(isAllowed)!;

export interface CallerUrlPolicy {
  /** tasks.fetch_private_urls: for deployments whose callers are trusted and whose files are on a private network. */
  allowPrivateAddresses?: boolean;
  /** Which addresses a connection may go to when private ones are not allowed; default isPublicAddress (tests narrow it to tell two loopback addresses apart). */
  isAllowedAddress?: (address: string) => boolean;
}

/** fetch for a caller's URL: its connections (redirects included) to public addresses only unless the policy allows. */
export function fetchCallerUrl(url: string, init: RequestInit, policy: CallerUrlPolicy): Promise<Response> {
  return fetch(url, policy.allowPrivateAddresses ? init : { ...init, dispatcher: agentFor(policy.isAllowedAddress ?? isPublicAddress) });
}

/** Whether the error (or one of its causes) is a connection refused for its address. */
export function isPrivateAddressRefusal(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) if (cause instanceof PrivateAddressError) return true;
  return false;
}

export interface CallerReadOptions extends CallerUrlPolicy {
  timeoutMs: number;
  maxBytes: number;
  /** The caller's own abort (lease lost, shutdown): rethrown as it is. */
  signal?: AbortSignal;
}

/** At most this many redirects are followed, each hop checked as the first. */
const MOST_REDIRECTS = 3;

/**
 * The body at a caller's URL, GET, redirects followed by hand (http and https
 * only, at most MOST_REDIRECTS), within the timeout (the whole exchange) and
 * the size cap. `enough` is asked as the body arrives (each time its size has
 * doubled) and stops the read once it answers true: what was read is returned.
 * Any failure is a CallerUrlError.
 */
export async function readCallerUrl(url: string, options: CallerReadOptions, enough?: (prefix: Buffer) => boolean): Promise<Buffer> {
  const signal = AbortSignal.any([...(options.signal ? [options.signal] : []), AbortSignal.timeout(options.timeoutMs)]);
  try {
    const response = await follow(url, options, signal);
    const tooLarge = () => new CallerUrlError("too_large", `${loggableUrl(response.url)} is larger than ${options.maxBytes} bytes`);
    return await readCapped(response, options.maxBytes, tooLarge, enough);
  } catch (error) {
    if (options.signal?.aborted) throw error;
    if (error instanceof CallerUrlError) throw error;
    // The detail stays in the cause: a logger (pino's err serializer) appends every cause's message itself.
    if (isPrivateAddressRefusal(error)) throw new CallerUrlError("private_address", `${loggableUrl(url)}: not fetched`, undefined, { cause: error });
    const timedOut = signal.aborted;
    throw new CallerUrlError(timedOut ? "timeout" : "network", `${loggableUrl(url)}: ${timedOut ? `no answer within ${options.timeoutMs} ms` : "not fetched"}`, undefined, { cause: error });
  }
}

async function follow(url: string, options: CallerReadOptions, signal: AbortSignal): Promise<Response> {
  let current = url;
  for (let hop = 0; ; hop += 1) {
    const response = await fetchCallerUrl(current, { redirect: "manual", signal }, options);
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel().catch(() => undefined);
      const next = URL.parse(location, current);
      if (hop >= MOST_REDIRECTS) throw new CallerUrlError("redirect", `${loggableUrl(url)}: more than ${MOST_REDIRECTS} redirects`);
      if (next?.protocol !== "http:" && next?.protocol !== "https:") {
        throw new CallerUrlError("redirect", `${loggableUrl(current)} redirects to a URL that is not http or https (${next?.protocol ?? "not a URL"})`);
      }
      current = next.href;
      continue;
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new CallerUrlError("status", `${loggableUrl(current)} answered ${response.status}`, response.status);
    }
    return response;
  }
}

