// `npm run start:core`: the core alone, serving Connect, gRPC and gRPC-Web on GRPC_PORT.
import { createCoreServer } from "./server.ts";
import { announceDevKey, closeOnSignals, createCoreOrExit, listenOrExit, startupToListen } from "./startup.ts";

const settings = await startupToListen(process.env, { listensOn: ["GRPC_PORT"] });
const { config, env, host, grpcPort, logger, generatedKeys } = settings;
const core = await createCoreOrExit({ config, env, logger, generatedKeys });
announceDevKey(settings, core.accounts.keptKeyIds);
const server = await listenOrExit({ host, port: grpcPort, variable: "GRPC_PORT" }, () => createCoreServer(core, { host, port: grpcPort, logger }));
logger.info({ url: server.url }, "core listening (Connect, gRPC, gRPC-Web over HTTP/2)");
closeOnSignals(async () => {
  await server.close();
  await core.close();
});
