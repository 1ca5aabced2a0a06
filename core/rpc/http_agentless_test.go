package rpc

import (
	"context"
	"testing"

	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1connect"
)

// A client that sends Agentfs-Agent on every call can create its agent.
func TestHTTPCreateAgentWithAgentHeader(t *testing.T) {
	srv := startHTTP(t, "tok")
	ctx := context.Background()
	c := agentfsv1connect.NewAgentServiceClient(srv.Client(), srv.URL, headers("tok", "newbie"))
	if _, err := c.CreateAgent(ctx, &v1.CreateAgentRequest{Id: "newbie"}); err != nil {
		t.Fatalf("CreateAgent with the agent header: %v", err)
	}
	if _, err := c.ListAgents(ctx, &v1.ListAgentsRequest{}); err != nil {
		t.Fatalf("ListAgents with the agent header: %v", err)
	}
	info, err := c.Info(ctx, &v1.InfoRequest{})
	if err != nil || info.Id != "newbie" {
		t.Fatalf("Info = %v, %v", info, err)
	}
}
