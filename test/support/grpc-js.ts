// Calling the core's server as an internal service would: a plain @grpc/grpc-js
// client (the generated protobuf-es schemas as its serializers), and `buf curl`
// calling it schema-less through server reflection.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import type * as grpc from "@grpc/grpc-js";

const buf = fileURLToPath(new URL("../../node_modules/.bin/buf", import.meta.url));
const run = promisify(execFile);

/** A grpc-js method definition that (de)serializes with protobuf-es schemas; unary unless `responseStream`. */
export function grpcMethod<I extends DescMessage, O extends DescMessage>(path: string, input: I, output: O, responseStream = false) {
  return {
    path,
    requestStream: false,
    responseStream,
    requestSerialize: (message: MessageShape<I>) => Buffer.from(toBinary(input, message)),
    requestDeserialize: (bytes: Buffer) => fromBinary(input, bytes),
    responseSerialize: (message: MessageShape<O>) => Buffer.from(toBinary(output, message)),
    responseDeserialize: (bytes: Buffer) => fromBinary(output, bytes),
  };
}

/** The grpc-js error a call failed with; throws if it succeeded. */
export async function rejection(promise: Promise<unknown>): Promise<grpc.ServiceError> {
  try {
    await promise;
  } catch (error) {
    return error as grpc.ServiceError;
  }
  throw new Error("the call succeeded");
}

/** `buf curl --http2-prior-knowledge --protocol grpc <args>`: its stdout and stderr, rejecting on a non-zero exit. */
export function bufCurl(...args: string[]) {
  return run(buf, ["curl", "--http2-prior-knowledge", "--protocol", "grpc", ...args], { timeout: 30_000 });
}
