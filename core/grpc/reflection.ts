// gRPC server reflection v1 (grpc.reflection.v1.ServerReflection), enough for
// `buf curl` and grpcurl to list services and call methods without a schema.
// See https://github.com/grpc/grpc/blob/master/doc/server-reflection.md
import { create, toBinary } from "@bufbuild/protobuf";
import type { DescExtension, DescFile, DescService, MessageInitShape } from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import type { ConnectRouter } from "@connectrpc/connect";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import {
  ServerReflection,
  ServerReflectionResponseSchema,
} from "../../gen/grpc/reflection/v1/reflection_pb.js";
import type { ServerReflectionRequest } from "../../gen/grpc/reflection/v1/reflection_pb.js";

type Answer = MessageInitShape<typeof ServerReflectionResponseSchema>["messageResponse"];

/**
 * Registers the reflection service. It lists `services` plus itself and
 * grpc.health.v1.Health (register that one with `registerHealth`), and
 * describes every file those services reach through their imports.
 */
export function registerReflection(router: ConnectRouter, services: DescService[]): void {
  const index = indexFiles([...services, ServerReflection, Health]);
  const serviceNames = [...new Set([...services, ServerReflection, Health].map((s) => s.typeName))];

  const answer = (req: ServerReflectionRequest): Answer => {
    const { case: kind, value } = req.messageRequest;
    switch (kind) {
      case "listServices":
        return { case: "listServicesResponse", value: { service: serviceNames.map((name) => ({ name })) } };
      case "fileByFilename":
        return fileAnswer(index, index.byFilename.get(value), `file ${value}`);
      case "fileContainingSymbol":
        return fileAnswer(index, index.bySymbol.get(value), `symbol ${value}`);
      case "fileContainingExtension": {
        const ext = index.extensions.find(
          (e) => e.extendee.typeName === value.containingType && e.number === value.extensionNumber,
        );
        return fileAnswer(index, ext?.file, `extension ${value.extensionNumber} of ${value.containingType}`);
      }
      case "allExtensionNumbersOfType": {
        if (!index.bySymbol.has(value)) return notFound(`type ${value}`);
        const numbers = index.extensions.filter((e) => e.extendee.typeName === value).map((e) => e.number);
        return { case: "allExtensionNumbersResponse", value: { baseTypeName: value, extensionNumber: numbers } };
      }
      default:
        return { case: "errorResponse", value: { errorCode: Code.InvalidArgument, errorMessage: "empty request" } };
    }
  };

  router.service(ServerReflection, {
    // One answer per request, in order; a lookup failure is an error answer
    // on the stream, not a failed RPC, as the protocol asks.
    async *serverReflectionInfo(requests) {
      for await (const req of requests) {
        yield create(ServerReflectionResponseSchema, {
          validHost: req.host,
          originalRequest: req,
          messageResponse: answer(req),
        });
      }
    },
  });
}

interface FileIndex {
  byFilename: Map<string, DescFile>;
  /** Fully qualified names (no leading dot) of messages, enums, extensions, services and methods. */
  bySymbol: Map<string, DescFile>;
  extensions: DescExtension[];
  /** Serialized FileDescriptorProtos, filled on first use. */
  binary: Map<DescFile, Uint8Array>;
}

function indexFiles(services: DescService[]): FileIndex {
  const index: FileIndex = { byFilename: new Map(), bySymbol: new Map(), extensions: [], binary: new Map() };
  const visit = (file: DescFile): void => {
    const filename = file.proto.name;
    if (index.byFilename.has(filename)) return;
    index.byFilename.set(filename, file);
    for (const type of nestedTypes(file)) {
      index.bySymbol.set(type.typeName, file);
      if (type.kind === "service") {
        for (const method of type.methods) index.bySymbol.set(`${type.typeName}.${method.name}`, file);
      }
      if (type.kind === "extension") index.extensions.push(type);
    }
    file.dependencies.forEach(visit);
  };
  for (const service of services) visit(service.file);
  return index;
}

/** The file first, then all its transitive imports, each once. */
function fileAnswer(index: FileIndex, file: DescFile | undefined, what: string): Answer {
  if (!file) return notFound(what);
  const files = new Set<DescFile>();
  const add = (f: DescFile): void => {
    if (files.has(f)) return;
    files.add(f);
    f.dependencies.forEach(add);
  };
  add(file);
  const fileDescriptorProto = [...files].map((f) => {
    let bytes = index.binary.get(f);
    if (!bytes) index.binary.set(f, (bytes = toBinary(FileDescriptorProtoSchema, f.proto)));
    return bytes;
  });
  return { case: "fileDescriptorResponse", value: { fileDescriptorProto } };
}

function notFound(what: string): Answer {
  return { case: "errorResponse", value: { errorCode: Code.NotFound, errorMessage: `${what} not found` } };
}
