// A usage record as the core's services answer it (router.v1.UsageRecord):
// the same message for a key's GetGeneration and the operators' GetUsage.
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { UsageRecordSchema, type UsageRecord as UsageRecordMessage } from "../../gen/router/v1/usage_pb.js";
import type { UsageRecord } from "./store.ts";

export function usageRecordToProto(record: UsageRecord): UsageRecordMessage {
  const { createdAt, ...fields } = record;
  return create(UsageRecordSchema, { ...fields, createdAt: timestampFromMs(createdAt) });
}
