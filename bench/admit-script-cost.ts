// Where the Redis admission script spends its time (`npx node bench/admit-script-cost.ts`):
// a diagnostic for the accounts benchmark, not part of `npm run bench`.
//
// Starts a private redis-server (redis-child.ts), seeds one organisation and
// key with the core's own Redis store, then runs cut-down copies of the real
// admission script (core/accounts/redis-scripts.ts, read, never changed) with
// EVALSHA, sequentially, and reads Redis's own time per call from INFO
// commandstats: the empty script, the prelude, the payload decode, the script
// up to each of its numbered steps, the whole script without parts of its
// reply, and the whole script. Best of --repeats runs of --calls calls each.
import { parseArgs } from "node:util";
import { accountScripts } from "../core/accounts/redis-scripts.ts";
import { createRedisAccountStores } from "../core/accounts/redis-store.ts";
import { startRedisChild } from "./children.ts";
import { commandStats, connectResp } from "./resp.ts";

const { values: flags } = parseArgs({ options: { calls: { type: "string", default: "3000" }, repeats: { type: "string", default: "3" } } });
const calls = Number(flags.calls);
const repeats = Number(flags.repeats);

const { child: redis, port } = await startRedisChild();
try {
  const digest = "d".repeat(64);
  const stores = await createRedisAccountStores({ url: redis.url });
  await stores.seed([
    {
      organizationId: "org_bench",
      rpm: 1e9,
      tpm: 1e9,
      initialCreditsNanos: 10n ** 15n,
      keys: [{ digest, keyId: "key_bench", organizationId: "org_bench", name: "key_bench", rpm: 1e9, tpm: 1e9, allowedModels: [], disabled: false, createdAt: 0 }],
    },
  ]);
  await stores.close();

  const admit = (accountScripts.admit as unknown as { SCRIPT: string }).SCRIPT;
  const upTo = (marker: string) => {
    const at = admit.indexOf(marker);
    if (at < 0) throw new Error(`the admission script has no "${marker}" any more`);
    return admit.slice(0, at) + "\nreturn 1";
  };
  const variants: [string, string][] = [
    ["empty script (`return 1`)", "return 1"],
    ["prelude (key-name builders, helpers)", upTo("local request = cjson.decode")],
    ["+ payload decode", upTo("local function refuse")],
    ["+ 1. key record (HGETALL)", upTo("-- 2.")],
    ["+ 2. allow-list", upTo("-- 3.")],
    ["+ 3. duplicate check (EXISTS)", upTo("-- 4.")],
    ["+ 4. rate windows (3 HMGET)", upTo("-- 5.")],
    ["+ 5. credit hold (GET, DECRBY)", upTo("-- Admitted:")],
    ["+ counting and recording (2 HINCRBY, HSET, 3 PEXPIRE)", upTo("local windows = {}")],
    ["whole script, reply without the key record", admit.replace("key = fields, ", "")],
    ["whole script", admit],
  ];

  const connection = await connectResp(port);
  const best = new Map<string, number>();
  let id = 0;
  for (let repeat = 0; repeat < repeats; repeat++) {
    for (const [name, script] of variants) {
      const sha = String(await connection.command("SCRIPT", "LOAD", script));
      await connection.command("CONFIG", "RESETSTAT");
      for (let i = 0; i < calls; i++) {
        const now = Date.now();
        const minuteStart = now - (now % 60_000);
        const payload = JSON.stringify({
          digest,
          requestId: `cost_${id++}`,
          modelIds: ["bench/sim"],
          minuteStart: String(minuteStart),
          day: new Date(now).toISOString().slice(0, 10),
          windowTtlMs: String(minuteStart + 180_000 - now),
          freeTtlMs: "3600000",
          requestTtlMs: "86400000",
          abandonAt: String(Date.now() + 21_600_000),
          charge: { kind: "credits", holdNanos: "42000" },
        });
        const reply = await connection.command("EVALSHA", sha, "0", "rtr:", payload);
        if (reply instanceof Error) throw reply;
      }
      const stats = (await commandStats(connection)).get("evalsha")!;
      best.set(name, Math.min(best.get(name) ?? Infinity, stats.usec / stats.calls));
    }
  }
  connection.close();

  process.stdout.write(`| admission script, cut after | Redis µs per call (best of ${repeats} × ${calls}) |\n| --- | ---: |\n`);
  for (const [name] of variants) process.stdout.write(`| ${name} | ${best.get(name)!.toFixed(1)} |\n`);
} finally {
  await redis.stop();
}
