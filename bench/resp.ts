// A bare RESP2 connection for the accounts benchmark's own look at Redis:
// INFO (commandstats, cpu, server) and a few reads, plus a MONITOR recorder.
// Raw sockets rather than the `redis` package, so the benchmark sends nothing
// but the commands it names (no handshake commands in the counts).
import net from "node:net";

export type RespValue = string | number | null | RespValue[] | Error;

export interface RespConnection {
  command(...args: string[]): Promise<RespValue>;
  close(): void;
}

export async function connectResp(port: number): Promise<RespConnection> {
  const socket = net.connect(port, "127.0.0.1");
  socket.setNoDelay(true);
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  const waiting: { resolve: (value: RespValue) => void; reject: (error: Error) => void }[] = [];
  let buffer: Buffer = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => {
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
    for (;;) {
      const parsed = parse(buffer, 0);
      if (!parsed) break;
      buffer = buffer.subarray(parsed.end);
      waiting.shift()?.resolve(parsed.value);
    }
  });
  socket.on("error", (error) => {
    for (const w of waiting.splice(0)) w.reject(error);
  });
  return {
    command(...args) {
      return new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
        socket.write(encode(args));
      });
    },
    close: () => socket.destroy(),
  };
}

function encode(args: string[]): string {
  let out = `*${args.length}\r\n`;
  for (const arg of args) out += `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`;
  return out;
}

function parse(buffer: Buffer, start: number): { value: RespValue; end: number } | undefined {
  const lineEnd = buffer.indexOf("\r\n", start);
  if (lineEnd < 0) return undefined;
  const type = String.fromCharCode(buffer[start]);
  const line = buffer.toString("utf8", start + 1, lineEnd);
  switch (type) {
    case "+":
      return { value: line, end: lineEnd + 2 };
    case "-":
      return { value: new Error(line), end: lineEnd + 2 };
    case ":":
      return { value: Number(line), end: lineEnd + 2 };
    case "$": {
      const length = Number(line);
      if (length < 0) return { value: null, end: lineEnd + 2 };
      const end = lineEnd + 2 + length;
      if (buffer.length < end + 2) return undefined;
      return { value: buffer.toString("utf8", lineEnd + 2, end), end: end + 2 };
    }
    case "*": {
      const count = Number(line);
      if (count < 0) return { value: null, end: lineEnd + 2 };
      const items: RespValue[] = [];
      let offset = lineEnd + 2;
      for (let i = 0; i < count; i++) {
        const item = parse(buffer, offset);
        if (!item) return undefined;
        items.push(item.value);
        offset = item.end;
      }
      return { value: items, end: offset };
    }
    default:
      throw new Error(`unexpected RESP type ${JSON.stringify(type)}`);
  }
}

/** `INFO <section>` as a map of its `name:value` lines. */
export async function info(connection: RespConnection, section: string): Promise<Map<string, string>> {
  const reply = await connection.command("INFO", section);
  if (typeof reply !== "string") throw new Error(`INFO ${section}: unexpected reply ${String(reply)}`);
  const fields = new Map<string, string>();
  for (const line of reply.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0 && !line.startsWith("#")) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return fields;
}

export interface CommandCount {
  calls: number;
  usec: number;
}

/** INFO commandstats: calls and total microseconds per command (lowercase name). */
export async function commandStats(connection: RespConnection): Promise<Map<string, CommandCount>> {
  const stats = new Map<string, CommandCount>();
  for (const [name, value] of await info(connection, "commandstats")) {
    if (!name.startsWith("cmdstat_")) continue;
    const calls = Number(/calls=(\d+)/.exec(value)?.[1] ?? 0);
    const usec = Number(/usec=(\d+)/.exec(value)?.[1] ?? 0);
    stats.set(name.slice("cmdstat_".length), { calls, usec });
  }
  return stats;
}

/** redis-server's CPU (user + system, the whole process) in microseconds. */
export async function serverCpuMicros(connection: RespConnection): Promise<number> {
  const cpu = await info(connection, "cpu");
  return Math.round((Number(cpu.get("used_cpu_user")) + Number(cpu.get("used_cpu_sys"))) * 1e6);
}

export interface MonitorRecording {
  /** Stops recording and returns the lines Redis fed (without the leading '+'). */
  stop(): Promise<string[]>;
}

/** A MONITOR connection: every command Redis runs, those of scripts marked `[<db> lua]`. */
export async function startMonitor(port: number): Promise<MonitorRecording> {
  const socket = net.connect(port, "127.0.0.1");
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  const lines: string[] = [];
  let rest = "";
  let confirmed: () => void = () => {};
  const ok = new Promise<void>((resolve) => (confirmed = resolve));
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    const parts = (rest + chunk).split("\r\n");
    rest = parts.pop()!;
    for (const part of parts) {
      if (part === "+OK") confirmed();
      else if (part.startsWith("+")) lines.push(part.slice(1));
    }
  });
  socket.write("MONITOR\r\n");
  await ok;
  return {
    async stop() {
      // Let the last lines arrive, then hang up.
      await new Promise((resolve) => setTimeout(resolve, 50));
      socket.destroy();
      return lines;
    },
  };
}
