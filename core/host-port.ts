// `host:port` and http:// URLs as URLs and logs write them: an IPv6 address in brackets
// (`http://[::1]:18242`), which is otherwise neither a valid URL nor readable.
import net from "node:net";

export function hostPort(host: string, port: number | string): string {
  return `${net.isIPv6(host) ? `[${host}]` : host}:${port}`;
}

/** The http:// URL of a server listening on `host` and `port`. */
export function httpUrl(host: string, port: number | string): string {
  return `http://${hostPort(host, port)}`;
}
