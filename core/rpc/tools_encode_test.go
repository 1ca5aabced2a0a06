package rpc

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1connect"
	"github.com/agentfs-go/agentfs/core/store"
)

// syncPayload runs a call through CallSync and returns the response
// payload, or the error's message.
func syncPayload(t *testing.T, l *Local, method string, req proto.Message) ([]byte, *v1.Error) {
	t.Helper()
	head, data := l.CallSync(method, mustMarshal(t, req))
	var res v1.Result
	if err := proto.Unmarshal(append(head, data...), &res); err != nil {
		t.Fatal(err)
	}
	return res.Payload, res.Error
}

// The frame protocols answer ToolList and ToolGet with bytes written from
// the rows; they must be exactly what proto.Marshal makes of the Connect
// handlers' messages, for every shape of row: NULL and empty text,
// pending, failed and unknown statuses, zero, negative and large times,
// and non-ASCII text.
func TestToolEncodingMatches(t *testing.T) {
	_, sc, _ := startLocal(t, tempHello(t))
	l := sc.l
	ctx := l.c.ctx
	svc := l.c.svc
	tools := l.c.sess.Agent
	record := func(r *v1.ToolRecordRequest) {
		if _, e := syncPayload(t, l, agentfsv1connect.ToolsServiceToolRecordProcedure, r); e != nil {
			t.Fatal(e)
		}
	}
	record(&v1.ToolRecordRequest{Name: "fetch", StartedAt: 1_700_000_000, CompletedAt: 1_700_000_002,
		ParametersJson: proto.String(`{"url":"https://example.com/é","n":1}`), ResultJson: proto.String(`{"ok":true}`)})
	record(&v1.ToolRecordRequest{Name: "fetch", StartedAt: 1_700_000_001, CompletedAt: 1_700_000_001, Error: proto.String("timeout ⏱")})
	record(&v1.ToolRecordRequest{Name: "zero", StartedAt: 0, CompletedAt: 0, ResultJson: proto.String(`""`)})
	record(&v1.ToolRecordRequest{Name: "早", StartedAt: -5, CompletedAt: 1 << 40, ParametersJson: proto.String(`[]`)})
	if _, e := syncPayload(t, l, agentfsv1connect.ToolsServiceToolStartProcedure, &v1.ToolStartRequest{Name: "pending"}); e != nil {
		t.Fatal(e)
	}
	// What only another writer leaves: empty text, an unknown status.
	err := tools.DB.Write(context.Background(), func(c *store.Conn) error {
		_, err := c.Exec(`INSERT INTO tool_calls (name, parameters, result, error, status, started_at) VALUES ('', '', NULL, '', 'weird', 7)`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []*v1.ToolListRequest{
		{}, {Ascending: true}, {Name: "fetch"}, {Name: "fetch", Limit: 1}, {Since: 1_700_000_001},
		{Until: 1}, {Status: v1.ToolStatus_TOOL_STATUS_ERROR}, {Name: "nobody"},
	} {
		got, e := syncPayload(t, l, agentfsv1connect.ToolsServiceToolListProcedure, req)
		if e != nil {
			t.Fatalf("%v: %v", req, e)
		}
		resp, err := svc.ToolList(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if want := mustMarshal(t, resp); !bytes.Equal(got, want) {
			t.Errorf("ToolList %v:\n got %x\nwant %x", req, got, want)
		}
	}
	for id := int64(0); id <= 7; id++ {
		req := &v1.ToolGetRequest{Id: id}
		got, e := syncPayload(t, l, agentfsv1connect.ToolsServiceToolGetProcedure, req)
		if e != nil {
			t.Fatalf("%v: %v", req, e)
		}
		resp, err := svc.ToolGet(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if want := mustMarshal(t, resp); !bytes.Equal(got, want) {
			t.Errorf("ToolGet %d:\n got %x\nwant %x", id, got, want)
		}
	}

	// Text that is not UTF-8 (another writer's) fails the listing, as
	// proto.Marshal would, with the call named.
	err = tools.DB.Write(context.Background(), func(c *store.Conn) error {
		_, err := c.Exec(`INSERT INTO tool_calls (name, status, started_at) VALUES (CAST(X'66ff' AS TEXT), 'pending', 8)`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, e := syncPayload(t, l, agentfsv1connect.ToolsServiceToolListProcedure, &v1.ToolListRequest{}); e == nil || !strings.Contains(e.Message, "tool call 7: its name is not valid UTF-8") {
		t.Fatalf("listing a name that is not UTF-8: %v", e)
	}
}
