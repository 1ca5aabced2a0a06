// The descriptor of google/protobuf/descriptor.proto, which protobuf-es
// builds (boot) when it is loaded and needs only to read the generated
// files' descriptors, built at first use as theirs are (lazydesc.ts): the
// Node bundle (scripts/build-bundles.mjs) resolves the codegenv2 imports
// of protobuf-es' wkt/google/protobuf/descriptor_pb.js to this module, and
// this module's own import to those three functions' files alone (the
// codegenv2 index would import descriptor_pb.js again: a cycle).

import * as codegen from "@bufbuild/protobuf/codegenv2";
import { lazy } from "./lazy.js";

export const boot: typeof codegen.boot = (b) => lazy(() => codegen.boot(b));

export const messageDesc: typeof codegen.messageDesc = ((file: codegen.GenFile, path: number, ...paths: number[]) =>
  lazy(() => codegen.messageDesc(file, path, ...paths))) as typeof codegen.messageDesc;

export const enumDesc: typeof codegen.enumDesc = ((file: codegen.GenFile, path: number, ...paths: number[]) =>
  lazy(() => codegen.enumDesc(file, path, ...paths))) as typeof codegen.enumDesc;
