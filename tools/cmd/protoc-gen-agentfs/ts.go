package main

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"
)

func init() { emitters["ts"] = emitTS }

// emitTS writes agentfs/v1/clients_agentfs.ts for sdk-ts: the interface a
// transport implements (one unary call: procedure, request schema and
// value, response schema) and, per service, a client class with one typed
// method per RPC. The messages themselves come from protoc-gen-es
// (`*_pb.ts` beside it); the transports (stdio frames, Connect over HTTP)
// are hand-written in sdk-ts/src and know nothing of the services.
func emitTS(p *protogen.Plugin, services []*protogen.Service) error {
	if len(services) == 0 {
		return nil
	}
	dir := path.Dir(services[0].Desc.ParentFile().Path())
	name := dir + "/clients_agentfs.ts"
	g := p.NewGeneratedFile(name, "")

	// Imports: each message schema from the protoc-gen-es file of its
	// proto file, grouped per file and sorted so the output is stable.
	imports := map[string]map[string]bool{}
	add := func(m *protogen.Message, withType bool) {
		f := tsImportPath(dir, m.Desc.ParentFile().Path())
		if imports[f] == nil {
			imports[f] = map[string]bool{}
		}
		imports[f][tsName(m.Desc)+"Schema"] = true
		if withType {
			imports[f]["type "+tsName(m.Desc)] = true
		}
	}
	for _, s := range services {
		for _, m := range unary(s) {
			add(m.Input, false)
			add(m.Output, true)
		}
	}

	g.P("// ", header)
	g.P("// source: ", dir, "/*.proto")
	g.P("/* eslint-disable */")
	g.P()
	g.P(`import type { DescMessage, MessageInitShape, MessageShape } from "@bufbuild/protobuf";`)
	files := make([]string, 0, len(imports))
	for f := range imports {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		names := make([]string, 0, len(imports[f]))
		for n := range imports[f] {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool {
			return strings.TrimPrefix(names[i], "type ") < strings.TrimPrefix(names[j], "type ") ||
				(strings.TrimPrefix(names[i], "type ") == strings.TrimPrefix(names[j], "type ") && names[i] < names[j])
		})
		g.P("import { ", strings.Join(names, ", "), ` } from "`, f, `";`)
	}
	g.P()
	g.P("/**")
	g.P(" * UnaryTransport sends one call and resolves with the decoded response,")
	g.P(" * or rejects with the SDK's error for a failed call. The procedure is the")
	g.P(` * method's path, e.g. "/agentfs.v1.FilesystemService/Stat", the same over`)
	g.P(" * stdio frames and Connect's HTTP protocol.")
	g.P(" */")
	g.P("export interface UnaryTransport {")
	g.P("  unary<I extends DescMessage, O extends DescMessage>(")
	g.P("    procedure: string,")
	g.P("    input: I,")
	g.P("    request: MessageInitShape<I>,")
	g.P("    output: O,")
	g.P("  ): Promise<MessageShape<O>>;")
	g.P("}")
	for _, s := range services {
		svc := string(s.Desc.Name())
		g.P()
		g.P("/** The procedures of ", s.Desc.FullName(), ". */")
		g.P("export const ", svc, "Procedures = {")
		for _, m := range unary(s) {
			g.P("  ", lowerFirst(string(m.Desc.Name())), `: "`, procedure(m), `",`)
		}
		g.P("} as const;")
		g.P()
		writeDoc(g, "", comment(s.Comments.Leading), fmt.Sprintf("Typed client of %s over any UnaryTransport.", s.Desc.FullName()))
		g.P("export class ", svc, "Client {")
		g.P("  constructor(private readonly transport: UnaryTransport) {}")
		for _, m := range unary(s) {
			in, out := tsName(m.Input.Desc), tsName(m.Output.Desc)
			g.P()
			writeDoc(g, "  ", comment(m.Comments.Leading), "")
			g.P("  ", lowerFirst(string(m.Desc.Name())), "(request: MessageInitShape<typeof ", in, "Schema>): Promise<", out, "> {")
			g.P("    return this.transport.unary(", svc, "Procedures.", lowerFirst(string(m.Desc.Name())), ", ", in, "Schema, request, ", out, "Schema);")
			g.P("  }")
		}
		g.P("}")
	}
	return nil
}

// writeDoc writes a JSDoc block from comment lines, or fallback when there
// are none (nothing when both are empty).
func writeDoc(g *protogen.GeneratedFile, indent string, lines []string, fallback string) {
	if len(lines) == 0 {
		if fallback == "" {
			return
		}
		lines = []string{fallback}
	}
	g.P(indent, "/**")
	for _, l := range lines {
		g.P(indent, " * ", strings.ReplaceAll(l, "*/", "*\\/"))
	}
	g.P(indent, " */")
}

// tsName is the name protoc-gen-es gives a message: nested messages are
// joined to their parents with "_".
func tsName(d protoreflect.MessageDescriptor) string {
	full := string(d.FullName())
	pkg := string(d.ParentFile().Package())
	if pkg != "" {
		full = strings.TrimPrefix(full, pkg+".")
	}
	return strings.ReplaceAll(full, ".", "_")
}

// tsImportPath is the ESM import path, relative to dir, of the
// protoc-gen-es output for a proto file ("agentfs/v1/kv.proto" ->
// "./kv_pb.js"), as generated with import_extension=js.
func tsImportPath(dir, protoFile string) string {
	target := strings.TrimSuffix(protoFile, ".proto") + "_pb.js"
	fromParts := strings.Split(dir, "/")
	toParts := strings.Split(target, "/")
	i := 0
	for i < len(fromParts) && i < len(toParts)-1 && fromParts[i] == toParts[i] {
		i++
	}
	rel := strings.Repeat("../", len(fromParts)-i) + strings.Join(toParts[i:], "/")
	if !strings.HasPrefix(rel, "../") {
		rel = "./" + rel
	}
	return rel
}
