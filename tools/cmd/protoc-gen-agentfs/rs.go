package main

import (
	"google.golang.org/protobuf/compiler/protogen"
)

func init() { emitters["rs"] = emitRust }

// emitRust writes clients.rs for the Rust crate (sdk-rust/src/gen): per
// service, the procedure paths and a client with one typed method per RPC
// (blocking, plus an `_async` twin behind the crate's "tokio" feature).
// The methods only encode, call the hand-written transport
// (crate::transport::unary / unary_async) and decode; the messages
// themselves come from protoc-gen-prost (module crate::pb).
func emitRust(p *protogen.Plugin, services []*protogen.Service) error {
	if len(services) == 0 {
		return nil
	}
	g := p.NewGeneratedFile("clients.rs", "")
	g.P("// ", header)
	g.P()
	g.P("//! Typed clients of the agentfs.v1 services over any [`crate::transport::Transport`].")
	g.P()
	g.P("use std::io;")
	g.P("use std::sync::Arc;")
	g.P()
	g.P("use crate::pb;")
	g.P("use crate::transport::{self, Transport};")
	g.P()
	for _, s := range services {
		name := string(s.Desc.Name())
		for _, l := range comment(s.Comments.Leading) {
			g.P("/// ", l)
		}
		g.P("#[derive(Clone)]")
		g.P("pub struct ", name, "Client {")
		g.P("    t: Arc<dyn Transport>,")
		g.P("}")
		g.P()
		g.P("impl ", name, "Client {")
		for _, m := range unary(s) {
			g.P("    /// Procedure path of ", m.Desc.Name(), ".")
			g.P("    pub const ", upperSnake(string(m.Desc.Name())), ": &'static str = \"", procedure(m), "\";")
		}
		g.P()
		g.P("    /// A client sending its calls through `t`.")
		g.P("    pub fn new(t: Arc<dyn Transport>) -> Self {")
		g.P("        Self { t }")
		g.P("    }")
		for _, m := range unary(s) {
			in := "pb::" + string(m.Input.Desc.Name())
			out := "pb::" + string(m.Output.Desc.Name())
			fn := snake(string(m.Desc.Name()))
			c := upperSnake(string(m.Desc.Name()))
			g.P()
			for _, l := range comment(m.Comments.Leading) {
				g.P("    /// ", l)
			}
			g.P("    pub fn ", fn, "(&self, req: &", in, ") -> io::Result<", out, "> {")
			g.P("        transport::unary(&*self.t, Self::", c, ", req)")
			g.P("    }")
			g.P()
			g.P("    /// The async form of [`Self::", fn, "`].")
			g.P("    #[cfg(feature = \"tokio\")]")
			g.P("    pub async fn ", fn, "_async(&self, req: &", in, ") -> io::Result<", out, "> {")
			g.P("        transport::unary_async(&self.t, Self::", c, ", req).await")
			g.P("    }")
		}
		g.P("}")
		g.P()
	}
	return nil
}

// upperSnake turns "ReadFile" into "READ_FILE".
func upperSnake(s string) string {
	b := []byte(snake(s))
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - ('a' - 'A')
		}
	}
	return string(b)
}
