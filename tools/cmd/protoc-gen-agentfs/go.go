package main

import (
	"google.golang.org/protobuf/compiler/protogen"
)

func init() { emitters["go"] = emitGo }

// emitGo writes package agentfsv1rpc: for each service, a table from
// procedure to a function that decodes the request, calls the Connect
// handler and returns the response (the engine's stdio server dispatches
// through it, so both doors run the same handler), and a typed client over
// any Caller (the engine calls HostService through it).
func emitGo(p *protogen.Plugin, services []*protogen.Service) error {
	if len(services) == 0 {
		return nil
	}
	first := services[0].Methods[0].Input.GoIdent.GoImportPath
	dir := string(first) + "/agentfsv1rpc"
	g := p.NewGeneratedFile("agentfs/v1/agentfsv1rpc/rpc.agentfs.go", protogen.GoImportPath(dir))
	connectPkg := protogen.GoImportPath(string(first) + "/agentfsv1connect")
	ctx := protogen.GoImportPath("context").Ident("Context")
	protoPkg := protogen.GoImportPath("google.golang.org/protobuf/proto")

	g.P("// ", header)
	g.P()
	g.P("// Package agentfsv1rpc carries the API over transports other than Connect:")
	g.P("// method tables for servers and typed clients over a Caller.")
	g.P("package agentfsv1rpc")
	g.P()
	g.P("// Func decodes a serialized request, runs the method and returns the response.")
	g.P("type Func func(ctx ", ctx, ", payload []byte) (", protoPkg.Ident("Message"), ", error)")
	g.P()
	g.P("// Caller sends one call and decodes its response into resp.")
	g.P("type Caller interface {")
	g.P("Call(ctx ", ctx, ", procedure string, req, resp ", protoPkg.Ident("Message"), ") error")
	g.P("}")
	g.P()
	for _, s := range services {
		name := s.GoName
		g.P("// ", name, "Methods maps each procedure of ", s.Desc.FullName(), " to h.")
		g.P("func ", name, "Methods(h ", connectPkg.Ident(name+"Handler"), ") map[string]Func {")
		g.P("return map[string]Func{")
		for _, m := range unary(s) {
			g.P(connectPkg.Ident(name+m.GoName+"Procedure"), ": func(ctx ", ctx, ", b []byte) (", protoPkg.Ident("Message"), ", error) {")
			g.P("req := new(", m.Input.GoIdent, ")")
			g.P("if err := ", protoPkg.Ident("Unmarshal"), "(b, req); err != nil {")
			g.P("return nil, err")
			g.P("}")
			g.P("resp, err := h.", m.GoName, "(ctx, req)")
			g.P("if err != nil {")
			g.P("return nil, err")
			g.P("}")
			g.P("return resp, nil")
			g.P("},")
		}
		g.P("}")
		g.P("}")
		g.P()
		g.P("// ", name, "Client calls ", s.Desc.FullName(), " through a Caller.")
		g.P("type ", name, "Client struct{ c Caller }")
		g.P()
		g.P("// New", name, "Client returns a client sending its calls through c.")
		g.P("func New", name, "Client(c Caller) *", name, "Client { return &", name, "Client{c} }")
		g.P()
		for _, m := range unary(s) {
			for _, l := range comment(m.Comments.Leading) {
				g.P("// ", l)
			}
			g.P("func (x *", name, "Client) ", m.GoName, "(ctx ", ctx, ", req *", m.Input.GoIdent, ") (*", m.Output.GoIdent, ", error) {")
			g.P("resp := new(", m.Output.GoIdent, ")")
			g.P("if err := x.c.Call(ctx, ", connectPkg.Ident(name+m.GoName+"Procedure"), ", req, resp); err != nil {")
			g.P("return nil, err")
			g.P("}")
			g.P("return resp, nil")
			g.P("}")
			g.P()
		}
	}
	return nil
}
