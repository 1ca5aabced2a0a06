// Descriptors of the generated code (src/gen/**/*_pb.ts), built at their
// first use instead of when the SDK is imported.
//
// protoc-gen-es emits `export const XSchema = messageDesc(fileDesc("<base64
// FileDescriptorProto>", [deps]), i)`: importing the SDK decoded and linked
// every .proto file of the API (filesystem, agent, kv, tools, sandbox,
// process, session...), a large share of the SDK's cold start, though a
// program may never touch most of them. The Node bundle (dist/index.js,
// scripts/build-bundles.mjs) resolves the generated files' import of
// "@bufbuild/protobuf/codegenv2" to this module, whose fileDesc,
// messageDesc, enumDesc and serviceDesc return stand-ins: an object whose
// prototype, until the first property access, is a Proxy that builds the
// real descriptor (its file, and the files that one imports), then makes
// that descriptor the stand-in's prototype. From then on every property
// read is an ordinary prototype lookup of the real descriptor, so
// protobuf-es (which compares descriptors by type name, never by
// identity) sees the same values; only the stand-in has no own keys.

import * as codegen from "@bufbuild/protobuf/codegenv2";
import { lazy } from "./lazy.js";

export const fileDesc: typeof codegen.fileDesc = (b64, imports) => lazy(() => codegen.fileDesc(b64, imports));

export const messageDesc: typeof codegen.messageDesc = ((file: codegen.GenFile, path: number, ...paths: number[]) =>
  lazy(() => codegen.messageDesc(file, path, ...paths))) as typeof codegen.messageDesc;

export const enumDesc: typeof codegen.enumDesc = ((file: codegen.GenFile, path: number, ...paths: number[]) =>
  lazy(() => codegen.enumDesc(file, path, ...paths))) as typeof codegen.enumDesc;

export const serviceDesc: typeof codegen.serviceDesc = ((file: codegen.GenFile, path: number, ...paths: number[]) =>
  lazy(() => codegen.serviceDesc(file, path, ...paths))) as typeof codegen.serviceDesc;
