// `npm start`: gateway and core in one process, the gateway calling the core
// directly; the core also listens on GRPC_PORT for internal clients.
// `npm run start:gateway`: the gateway alone, reaching the core at CORE_URL.
import { once } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { httpUrl } from "../core/host-port.ts";
import { createCoreServer } from "../core/server.ts";
import { announceDevKey, closeOnSignals, createCoreOrExit, exitWithError, listenOrExit, startupToListen } from "../core/startup.ts";
import { createApp } from "./app.ts";
import { coreUrlProblem, createInProcessCoreClient, createRemoteCoreClient, type CoreClient } from "./core-client.ts";
import { listenGateway } from "./http-server.ts";

const split = process.argv.includes("--split");
if (split) {
  const problem = coreUrlProblem(process.env.CORE_URL);
  if (problem) exitWithError(problem);
}
const settings = await startupToListen(process.env, {
  devKey: !split,
  listensOn: split ? ["PORT"] : ["PORT", "GRPC_PORT"],
});
const { config, env, host, port, grpcPort, logger, generatedKeys } = settings;
const closers: (() => Promise<void>)[] = [];
let core: CoreClient;
if (split) {
  core = createRemoteCoreClient(env.CORE_URL!);
} else {
  const local = await createCoreOrExit({ config, env, logger, generatedKeys });
  announceDevKey(settings, local.accounts.keptKeyIds);
  const coreServer = await listenOrExit({ host, port: grpcPort, variable: "GRPC_PORT" }, () => createCoreServer(local, { host, port: grpcPort, logger }));
  logger.info({ url: coreServer.url }, "core listening (Connect, gRPC, gRPC-Web over HTTP/2)");
  closers.push(() => coreServer.close(), () => local.close());
  core = createInProcessCoreClient(local);
}

const app = createApp({ core, logger, idPrefix: config.id_prefix, websocket: config.responses_websocket });
const server: Server = await listenOrExit({ host, port, variable: "PORT" }, () => listening(listenGateway(app, port, host)));
server.keepAliveTimeout = 65_000;
logger.info({ url: httpUrl(host, (server.address() as AddressInfo).port) }, split ? "gateway listening (core at CORE_URL)" : "gateway listening");
closeOnSignals(async () => {
  app.sockets.close();
  await new Promise((resolve) => server.close(resolve));
  for (const close of closers) await close();
});

/** The server once it listens, or its listen error (a port in use) as a rejection. */
async function listening(server: Server): Promise<Server> {
  await once(server, "listening"); // rejects with the server's "error"
  return server;
}
