// `npm start`: gateway and core in one process, the gateway calling the core
// directly; the core also listens on GRPC_PORT for internal clients.
// `npm run start:gateway`: the gateway alone, reaching the core at CORE_URL.
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createCoreServer } from "../core/server.ts";
import { closeOnSignals, createCoreOrExit, startup } from "../core/startup.ts";
import { createApp } from "./app.ts";
import { createInProcessCoreClient, createRemoteCoreClient, type CoreClient } from "./core-client.ts";

const split = process.argv.includes("--split");
const { config, env, host, port, grpcPort, logger } = startup(process.env, { devKey: !split });
const closers: (() => Promise<void>)[] = [];
let core: CoreClient;
if (split) {
  if (!env.CORE_URL) {
    process.stderr.write("CORE_URL is required with start:gateway (for example http://127.0.0.1:50051)\n");
    process.exit(1);
  }
  core = createRemoteCoreClient(env.CORE_URL);
} else {
  const local = await createCoreOrExit({ config, env, logger });
  const coreServer = await createCoreServer(local, { host, port: grpcPort });
  logger.info({ url: coreServer.url }, "core listening (Connect, gRPC, gRPC-Web over HTTP/2)");
  closers.push(() => coreServer.close(), () => local.close());
  core = createInProcessCoreClient(local);
}

const app = createApp({ core, logger, idPrefix: config.id_prefix });
const server: Server = app.listen(port, host);
server.keepAliveTimeout = 65_000;
await new Promise((resolve) => server.once("listening", resolve));
logger.info({ url: `http://${host}:${(server.address() as AddressInfo).port}` }, split ? "gateway listening (core at CORE_URL)" : "gateway listening");
closeOnSignals(async () => {
  await new Promise((resolve) => server.close(resolve));
  for (const close of closers) await close();
});
