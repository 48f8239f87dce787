// The core's network face: Connect, gRPC and gRPC-Web on one cleartext HTTP/2
// port, with health checking and server reflection for `buf curl`.
import { httpUrl } from "./host-port.ts";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import type { ConnectRouter } from "@connectrpc/connect";
import { AccountService } from "../gen/router/v1/accounts_pb.js";
import { CatalogueService } from "../gen/router/v1/catalogue_pb.js";
import { SelectionService } from "../gen/router/v1/selection_pb.js";
import { ConversationService } from "../gen/router/v1/conversations_pb.js";
import { InferenceService } from "../gen/router/v1/inference_pb.js";
import { TaskService } from "../gen/router/v1/tasks_pb.js";
import type { Core } from "./create-core.ts";
import { createHealthState, registerHealth, ServingStatus, type HealthState } from "./grpc/health.ts";
import { coreRequestHandler, type HandlerLog } from "./grpc/node-handler.ts";
import { registerReflection } from "./grpc/reflection.ts";

export interface CoreServer {
  url: string;
  port: number;
  health: HealthState;
  close(graceMs?: number): Promise<void>;
}

/** The core's own services: routed, reported SERVING by health, listed by reflection. */
const SERVICES = [InferenceService, CatalogueService, SelectionService, AccountService, ConversationService, TaskService];

export function coreRoutes(core: Core, health: HealthState) {
  return (router: ConnectRouter) => {
    router.service(InferenceService, core.services.inference);
    router.service(CatalogueService, core.services.catalogue);
    router.service(SelectionService, core.services.selection);
    router.service(AccountService, core.services.accounts);
    router.service(ConversationService, core.services.conversations);
    router.service(TaskService, core.services.tasks);
    registerHealth(router, health);
    registerReflection(router, SERVICES);
  };
}

/** `logger`: where a failed answer is logged (a caller's cancellation at debug level); the console's error line without one. */
export async function createCoreServer(core: Core, options: { host: string; port: number; logger?: HandlerLog }): Promise<CoreServer> {
  const health = createHealthState();
  for (const service of SERVICES) health.set(service.typeName, ServingStatus.SERVING);
  // Not connectNodeAdapter itself: a caller that cancels a stream is not logged as a failed handler (node-handler.ts).
  const server = http2.createServer(coreRequestHandler(coreRoutes(core, health), options.logger));
  // An http2 server's close() waits for idle client sessions: keep them to end them.
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: httpUrl(options.host, port),
    port,
    health,
    /** Lets open calls finish for up to `graceMs`, then cuts what is left. */
    async close(graceMs = 5_000) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const session of sessions) session.close();
      const deadline = setTimeout(() => {
        for (const session of sessions) session.destroy();
      }, graceMs);
      await closed;
      clearTimeout(deadline);
    },
  };
}
