// gRPC health checking (grpc.health.v1.Health): Check, List and Watch over a
// small in-memory status table. See
// https://github.com/grpc/grpc/blob/master/doc/health-checking.md
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { ConnectRouter } from "@connectrpc/connect";
import {
  Health,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "../../gen/grpc/health/v1/health_pb.js";
import type { HealthCheckResponse } from "../../gen/grpc/health/v1/health_pb.js";

export { ServingStatus };

/** Serving status per service name; "" is the status of the whole server. */
export interface HealthState {
  set(service: string, status: ServingStatus): void;
  get(service: string): ServingStatus | undefined;
  list(): ReadonlyMap<string, ServingStatus>;
  /** Calls `listener` after every change; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
}

/** A status table whose overall status ("") starts as SERVING. */
export function createHealthState(): HealthState {
  const statuses = new Map<string, ServingStatus>([["", ServingStatus.SERVING]]);
  const listeners = new Set<() => void>();
  return {
    set(service, status) {
      if (statuses.get(service) === status) return;
      statuses.set(service, status);
      for (const listener of listeners) listener();
    },
    get: (service) => statuses.get(service),
    list: () => statuses,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

export function registerHealth(router: ConnectRouter, health: HealthState): void {
  const response = (status: ServingStatus): HealthCheckResponse =>
    create(HealthCheckResponseSchema, { status });

  router.service(Health, {
    check(req) {
      const status = health.get(req.service);
      if (status === undefined) {
        throw new ConnectError(`unknown service ${JSON.stringify(req.service)}`, Code.NotFound);
      }
      return response(status);
    },

    list() {
      return { statuses: Object.fromEntries([...health.list()].map(([name, s]) => [name, response(s)])) };
    },

    // The spec wants Watch to answer an unknown service with SERVICE_UNKNOWN
    // (not an error) and keep the stream open, since the service may appear later.
    async *watch(req, ctx) {
      const current = () => health.get(req.service) ?? ServingStatus.SERVICE_UNKNOWN;
      // `wake` resolves the pending wait; both a status change and the client
      // going away call it, so the loop never polls.
      let wake = () => {};
      const unsubscribe = health.subscribe(() => wake());
      const onAbort = () => wake();
      ctx.signal.addEventListener("abort", onAbort);
      try {
        let sent: ServingStatus | undefined;
        while (!ctx.signal.aborted) {
          // Re-read after every wake-up: several changes may have happened
          // while we were suspended in `yield`; only the latest one matters.
          const status = current();
          if (status !== sent) {
            sent = status;
            yield response(status);
            continue;
          }
          await new Promise<void>((resolve) => (wake = resolve));
        }
      } finally {
        unsubscribe();
        ctx.signal.removeEventListener("abort", onAbort);
      }
    },
  });
}
