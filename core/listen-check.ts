// Why a server could not listen, in one line an operator can act on, and a
// check that the ports are free before anything is printed or started.
import { once } from "node:events";
import net from "node:net";
import { hostPort } from "./host-port.ts";

/** A port this process will listen on, with the environment variable that chooses it. */
export interface ListenTarget {
  host: string;
  port: number;
  variable: "PORT" | "GRPC_PORT";
}

/** One line for a failed listen(): what went wrong and which variable to change. */
export function describeListenError(error: unknown, target: ListenTarget): string {
  const where = `Cannot listen on ${hostPort(target.host, target.port)}`;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case "EADDRINUSE":
      return `${where}: the port is already in use (set ${target.variable} to choose another)`;
    case "EACCES":
      return `${where}: permission denied (ports below 1024 need privileges; set ${target.variable} to choose another)`;
    case "EADDRNOTAVAIL":
      return `${where}: the address is not one of this machine's (set HOST to choose another)`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `${where}: HOST ${JSON.stringify(target.host)} does not resolve to an address`;
    default:
      return `${where}: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * Binds every target (port 0 needs no check) and releases them again: the
 * first that cannot be bound is described, else undefined.
 */
export async function findListenProblem(targets: ListenTarget[]): Promise<string | undefined> {
  const named = targets.filter((target) => target.port !== 0);
  const [first, second] = named.filter((target) => named.some((other) => other !== target && other.port === target.port));
  if (first && second) return `${first.variable} and ${second.variable} are both ${first.port}; they must differ`;
  const held: net.Server[] = [];
  try {
    for (const target of named) {
      const server = net.createServer();
      held.push(server);
      server.listen(target.port, target.host);
      try {
        await once(server, "listening"); // rejects with the server's "error"
      } catch (error) {
        return describeListenError(error, target);
      }
    }
    return undefined;
  } finally {
    await Promise.all(held.map((server) => new Promise((resolve) => (server.listening ? server.close(resolve) : resolve(undefined)))));
  }
}
