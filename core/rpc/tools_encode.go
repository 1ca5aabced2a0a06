package rpc

import (
	"context"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1connect"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1rpc"
	"github.com/agentfs-go/agentfs/core/toolcalls"
)

// Listings of tool calls, serialized straight from the database's rows.
//
// ToolList answering 10,000 calls spent most of its time outside SQLite:
// a toolcalls.Call, then a v1.ToolCall with four strings, for every row,
// then proto.Marshal of the lot. The frame protocols (stdio, the Node
// addon, WebAssembly) answer ToolList and ToolGet with the same bytes
// written from the rows (toolcalls.Log.ListRows) as they are read; the
// Connect handlers (HTTP) keep building messages. TestToolEncodingMatches
// checks both give the same bytes.

// encoded is a response already serialized: responseParts sends b as it
// is. Anything else that looks into it sees the message b decodes to.
type encoded struct {
	b   []byte
	new func() proto.Message
}

func (e *encoded) ProtoReflect() protoreflect.Message {
	m := e.new()
	if err := proto.Unmarshal(e.b, m); err != nil {
		panic(err) // b was written by this package: a bug, not input
	}
	return m.ProtoReflect()
}

// Field numbers of agentfs.v1.ToolCall (tools.proto).
const (
	tcID             = 1
	tcName           = 2
	tcParametersJSON = 3
	tcResultJSON     = 4
	tcError          = 5
	tcStatus         = 6
	tcStartedAt      = 7
	tcCompletedAt    = 8
	tcDurationMs     = 9
)

// toolStatus is the enum value of a status column, as statusNames maps it.
func toolStatus(s []byte) v1.ToolStatus {
	switch string(s) { // no allocation: the conversion is only compared
	case "pending":
		return v1.ToolStatus_TOOL_STATUS_PENDING
	case "success":
		return v1.ToolStatus_TOOL_STATUS_SUCCESS
	case "error":
		return v1.ToolStatus_TOOL_STATUS_ERROR
	}
	return v1.ToolStatus_TOOL_STATUS_UNSPECIFIED
}

// checkText refuses what proto.Marshal refuses in a string field.
func checkText(r *toolcalls.Row, what string, b []byte) error {
	if !utf8.Valid(b) {
		return errorf(v1.ErrorKind_ERROR_KIND_INTERNAL, "tool call %d: its %s is not valid UTF-8 text", r.ID, what)
	}
	return nil
}

// appendToolCall appends the fields of r as an agentfs.v1.ToolCall, with
// the tag and length of field num of the enclosing message before them,
// as proto.Marshal writes it: fields in order, proto3 defaults left out,
// optional fields present when set.
func appendToolCall(b []byte, num protowire.Number, r *toolcalls.Row) ([]byte, error) {
	for _, t := range [...]struct {
		what string
		b    []byte
	}{{"name", r.Name}, {"parameters", r.Parameters}, {"result", r.Result}, {"error", r.Error}} {
		if err := checkText(r, t.what, t.b); err != nil {
			return b, err
		}
	}
	status := toolStatus(r.Status)
	n := 0
	if r.ID != 0 {
		n += 1 + protowire.SizeVarint(uint64(r.ID))
	}
	if len(r.Name) > 0 {
		n += 1 + protowire.SizeBytes(len(r.Name))
	}
	for _, t := range [...][]byte{r.Parameters, r.Result, r.Error} {
		if t != nil {
			n += 1 + protowire.SizeBytes(len(t))
		}
	}
	if status != 0 {
		n += 1 + protowire.SizeVarint(uint64(status))
	}
	if r.StartedAt != 0 {
		n += 1 + protowire.SizeVarint(uint64(r.StartedAt))
	}
	if r.HasCompleted {
		n += 1 + protowire.SizeVarint(uint64(r.CompletedAt))
	}
	if r.HasDuration {
		n += 1 + protowire.SizeVarint(uint64(r.DurationMs))
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(n))
	if r.ID != 0 {
		b = protowire.AppendVarint(protowire.AppendTag(b, tcID, protowire.VarintType), uint64(r.ID))
	}
	if len(r.Name) > 0 {
		b = protowire.AppendBytes(protowire.AppendTag(b, tcName, protowire.BytesType), r.Name)
	}
	if r.Parameters != nil {
		b = protowire.AppendBytes(protowire.AppendTag(b, tcParametersJSON, protowire.BytesType), r.Parameters)
	}
	if r.Result != nil {
		b = protowire.AppendBytes(protowire.AppendTag(b, tcResultJSON, protowire.BytesType), r.Result)
	}
	if r.Error != nil {
		b = protowire.AppendBytes(protowire.AppendTag(b, tcError, protowire.BytesType), r.Error)
	}
	if status != 0 {
		b = protowire.AppendVarint(protowire.AppendTag(b, tcStatus, protowire.VarintType), uint64(status))
	}
	if r.StartedAt != 0 {
		b = protowire.AppendVarint(protowire.AppendTag(b, tcStartedAt, protowire.VarintType), uint64(r.StartedAt))
	}
	if r.HasCompleted {
		b = protowire.AppendVarint(protowire.AppendTag(b, tcCompletedAt, protowire.VarintType), uint64(r.CompletedAt))
	}
	if r.HasDuration {
		b = protowire.AppendVarint(protowire.AppendTag(b, tcDurationMs, protowire.VarintType), uint64(r.DurationMs))
	}
	return b, nil
}

// toolListEncoded is ToolList answered as bytes: a ToolListResponse whose
// calls (field 1) are written as the rows are read.
func (s *Service) toolListEncoded(ctx context.Context, r *v1.ToolListRequest) (proto.Message, error) {
	l, err := toolsFrom(ctx)
	if err != nil {
		return nil, err
	}
	var b []byte
	err = l.ListRows(ctx, toolFilter(r), func(row *toolcalls.Row) error {
		var err error
		b, err = appendToolCall(b, 1, row)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &encoded{b: b, new: func() proto.Message { return new(v1.ToolListResponse) }}, nil
}

// toolGetEncoded is ToolGet answered as bytes: a ToolGetResponse with
// found (field 1) and the call (field 2).
func (s *Service) toolGetEncoded(ctx context.Context, r *v1.ToolGetRequest) (proto.Message, error) {
	l, err := toolsFrom(ctx)
	if err != nil {
		return nil, err
	}
	var b []byte
	err = l.GetRow(ctx, r.Id, func(row *toolcalls.Row) error {
		b = protowire.AppendVarint(protowire.AppendTag(make([]byte, 0, 128), 1, protowire.VarintType), 1)
		var err error
		b, err = appendToolCall(b, 2, row)
		return err
	})
	if notFoundCall(err) {
		return &v1.ToolGetResponse{}, nil
	}
	if err != nil {
		return nil, err
	}
	return &encoded{b: b, new: func() proto.Message { return new(v1.ToolGetResponse) }}, nil
}

// encodedToolMethods replaces ToolList and ToolGet in a method table of
// the frame protocols with their encoded versions.
func encodedToolMethods(m map[string]agentfsv1rpc.Func, svc *Service) {
	m[agentfsv1connect.ToolsServiceToolListProcedure] = func(ctx context.Context, b []byte) (proto.Message, error) {
		req := new(v1.ToolListRequest)
		if err := proto.Unmarshal(b, req); err != nil {
			return nil, err
		}
		return svc.toolListEncoded(ctx, req)
	}
	m[agentfsv1connect.ToolsServiceToolGetProcedure] = func(ctx context.Context, b []byte) (proto.Message, error) {
		req := new(v1.ToolGetRequest)
		if err := proto.Unmarshal(b, req); err != nil {
			return nil, err
		}
		return svc.toolGetEncoded(ctx, req)
	}
}
