// `npm run start:core`: the core alone, serving Connect, gRPC and gRPC-Web on GRPC_PORT.
import { createCoreServer } from "./server.ts";
import { closeOnSignals, createCoreOrExit, listenOrExit, startupToListen } from "./startup.ts";

const { config, env, host, grpcPort, logger } = await startupToListen(process.env, { listensOn: ["GRPC_PORT"] });
const core = await createCoreOrExit({ config, env, logger });
const server = await listenOrExit({ host, port: grpcPort, variable: "GRPC_PORT" }, () => createCoreServer(core, { host, port: grpcPort, logger }));
logger.info({ url: server.url }, "core listening (Connect, gRPC, gRPC-Web over HTTP/2)");
closeOnSignals(async () => {
  await server.close();
  await core.close();
});
