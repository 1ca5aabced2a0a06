package main

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"
)

func init() { emitters["py"] = emitPy }

// emitPy writes the Python package agentfs.v1 beside the messages that
// grpc_tools.protoc generates (agentfs/v1/*_pb2.py): an __init__.py and
// rpc.py with, per service, a synchronous and an asyncio client class. Each
// method builds nothing itself: it hands the procedure, the request and the
// response class to the SDK's hand-written transport (agentfs._transport),
// which speaks stdio frames or Connect over HTTP.
func emitPy(p *protogen.Plugin, services []*protogen.Service) error {
	if len(services) == 0 {
		return nil
	}
	pkg := path.Dir(services[0].Location.SourceFile) // "agentfs/v1"

	pkgInit := p.NewGeneratedFile(pkg+"/__init__.py", "")
	pkgInit.P("# ", header)
	pkgInit.P(`"""Messages (*_pb2, from grpc_tools.protoc) and typed clients (rpc) of the`)
	pkgInit.P(`agentfs.v1 API defined in spec/proto."""`)

	g := p.NewGeneratedFile(pkg+"/rpc.py", "")
	g.P("# ", header)
	g.P(`"""Typed clients of the agentfs.v1 services.`)
	g.P()
	g.P("Each method sends one unary call through a transport from agentfs._transport")
	g.P(`(stdio frames or Connect over HTTP) and returns the decoded response."""`)
	g.P()
	g.P("from __future__ import annotations")
	g.P()
	g.P("from typing import TYPE_CHECKING")
	g.P()
	for _, mod := range pyModules(services) {
		g.P("from ", pyPackage(mod), " import ", path.Base(mod), " as ", pyAlias(mod))
	}
	g.P()
	g.P("if TYPE_CHECKING:")
	g.P("    from agentfs._transport import AsyncTransport, Transport")
	g.P()
	var names []string
	for _, s := range services {
		names = append(names, s.GoName+"Client", "Async"+s.GoName+"Client")
	}
	g.P("__all__ = [")
	for _, n := range names {
		g.P(`    "`, n, `",`)
	}
	g.P("]")
	for _, s := range services {
		for _, async := range []bool{false, true} {
			pyClient(g, s, async)
		}
	}
	return nil
}

// pyClient writes one client class of service s.
func pyClient(g *protogen.GeneratedFile, s *protogen.Service, async bool) {
	cls, transport, def, call := s.GoName+"Client", "Transport", "def", "self._t.unary"
	if async {
		cls, transport, def, call = "Async"+cls, "AsyncTransport", "async def", "await self._t.unary_async"
	}
	g.P()
	g.P()
	g.P("class ", cls, ":")
	doc := comment(s.Comments.Leading)
	if len(doc) == 0 {
		doc = []string{fmt.Sprintf("Client of %s.", s.Desc.FullName())}
	}
	pyDoc(g, "    ", doc)
	g.P()
	g.P(`    __slots__ = ("_t",)`)
	g.P()
	g.P("    def __init__(self, transport: ", transport, ") -> None:")
	g.P("        self._t = transport")
	for _, m := range unary(s) {
		in, out := pyType(m.Input.Desc), pyType(m.Output.Desc)
		g.P()
		g.P("    ", def, " ", snake(m.GoName), "(self, request: ", in, ") -> ", out, ":")
		if d := comment(m.Comments.Leading); len(d) > 0 {
			pyDoc(g, "        ", d)
		}
		g.P("        return ", call, `("`, procedure(m), `", request, `, out, ")")
	}
}

// pyDoc writes a docstring; triple quotes and backslashes in proto comments
// are escaped so the string stays valid.
func pyDoc(g *protogen.GeneratedFile, indent string, lines []string) {
	r := strings.NewReplacer(`\`, `\\`, `"""`, `\"\"\"`)
	if len(lines) == 1 {
		g.P(indent, `"""`, r.Replace(lines[0]), `"""`)
		return
	}
	g.P(indent, `"""`, r.Replace(lines[0]))
	for _, l := range lines[1:] {
		if l == "" {
			g.P()
		} else {
			g.P(indent, r.Replace(l))
		}
	}
	g.P(indent, `"""`)
}

// pyModules lists the *_pb2 modules ("agentfs/v1/filesystem_pb2") that
// define the requests and responses of services, sorted.
func pyModules(services []*protogen.Service) []string {
	seen := map[string]bool{}
	for _, s := range services {
		for _, m := range unary(s) {
			seen[pyModule(m.Input.Desc)] = true
			seen[pyModule(m.Output.Desc)] = true
		}
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// pyModule is protoc's Python module path of the file defining d.
func pyModule(d protoreflect.MessageDescriptor) string {
	return strings.TrimSuffix(d.ParentFile().Path(), ".proto") + "_pb2"
}

// pyPackage turns "agentfs/v1/kv_pb2" into "agentfs.v1".
func pyPackage(mod string) string { return strings.ReplaceAll(path.Dir(mod), "/", ".") }

// pyAlias names the imported module: "agentfs/v1/kv_pb2" -> "_kv_pb2".
func pyAlias(mod string) string { return "_" + path.Base(mod) }

// pyType is the class of message d as seen from rpc.py.
func pyType(d protoreflect.MessageDescriptor) string {
	return pyAlias(pyModule(d)) + "." + string(d.Name())
}
