package rpc

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/agentfs-go/agentfs/core"
	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1connect"
)

// queryServer serves one agent "q" with the given query limits; each
// Query request signals started when the server has it and done when
// its handler returned.
func queryServer(t *testing.T, lim core.QueryLimits) (client agentfsv1connect.AgentServiceClient, started, done chan struct{}) {
	t.Helper()
	dir, err := NewAgentDir(t.TempDir(), core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	started, done = make(chan struct{}, 16), make(chan struct{}, 16)
	h := NewHTTPHandler(dir, HTTPOptions{Version: "test", QueryLimits: lim})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		query := strings.HasSuffix(r.URL.Path, "/Query")
		if query {
			started <- struct{}{}
		}
		h.ServeHTTP(w, r)
		if query {
			done <- struct{}{}
		}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(func() { srv.Close(); dir.Close() })
	admin := agentfsv1connect.NewAgentServiceClient(srv.Client(), srv.URL, connect.WithGRPC())
	if _, err := admin.CreateAgent(context.Background(), &v1.CreateAgentRequest{Id: "q"}); err != nil {
		t.Fatal(err)
	}
	kv := agentfsv1connect.NewKvServiceClient(srv.Client(), srv.URL, connect.WithGRPC(), headers("", "q"))
	if _, err := kv.KvSet(context.Background(), &v1.KvSetRequest{Key: "k", ValueJson: "1"}); err != nil {
		t.Fatal(err)
	}
	return agentfsv1connect.NewAgentServiceClient(srv.Client(), srv.URL, connect.WithGRPC(), headers("", "q")), started, done
}

func wantKeys(t *testing.T, ag agentfsv1connect.AgentServiceClient) {
	t.Helper()
	// A deadline far beyond any query here: without it a stuck agent
	// would hang the test instead of failing it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	q, err := ag.Query(ctx, &v1.QueryRequest{Sql: "SELECT key FROM kv_store WHERE key = ?", Params: []*v1.Value{{Kind: &v1.Value_Text{Text: "k"}}}})
	if err != nil || len(q.Rows) != 1 || q.Rows[0].Values[0].GetText() != "k" || len(q.Columns) != 1 || q.Columns[0] != "key" {
		t.Fatalf("Query after the attack: %v %v", q, err)
	}
}

// Over serve http: ATTACH and the host file functions are refused with
// PERMISSION_DENIED, no file appears, and no later request sees an
// attached database.
func TestAttack_SQL_HTTPAttachAndHostFiles(t *testing.T) {
	ag, _, _ := queryServer(t, core.QueryLimits{})
	ctx := context.Background()
	dir := t.TempDir()
	for _, sql := range []string{
		"ATTACH '" + filepath.Join(dir, "other.db") + "' AS other",
		"SELECT writefile('" + filepath.Join(dir, "pwned") + "', 'pwned')",
		"SELECT readfile('/etc/passwd')",
		"SELECT name FROM fsdir('" + dir + "')",
		"CREATE TEMP TABLE t (x)",
		"PRAGMA query_only = 0",
		"SELECT 1; DELETE FROM kv_store",
	} {
		_, err := ag.Query(ctx, &v1.QueryRequest{Sql: sql})
		if connect.CodeOf(err) != connect.CodePermissionDenied {
			t.Errorf("%s: %v, want PERMISSION_DENIED", sql, err)
			continue
		}
		if e := apiError(t, err); e.Kind != v1.ErrorKind_ERROR_KIND_PERMISSION_DENIED || !strings.HasPrefix(e.Message, "query: not allowed: ") {
			t.Errorf("%s: error %v", sql, e)
		}
	}
	for _, name := range []string{"other.db", "pwned"} {
		if _, err := os.Lstat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists after refused queries", name)
		}
	}
	for i := 0; i < 3; i++ {
		q, err := ag.Query(ctx, &v1.QueryRequest{Sql: "SELECT name FROM pragma_database_list"})
		if err != nil || len(q.Rows) != 1 || q.Rows[0].Values[0].GetText() != "main" {
			t.Fatalf("databases after a refused ATTACH: %v %v", q, err)
		}
	}
	// A syntax error stays INVALID_ARGUMENT.
	if _, err := ag.Query(ctx, &v1.QueryRequest{Sql: "SELEC 1"}); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("syntax error: %v", err)
	}
	wantKeys(t, ag)
}

// A client that sends an endless query and goes away frees the agent:
// the server stops the statement (its handler returns) and the next
// requests are answered. The server has no step budget here, so only
// the cancellation can stop it; more such requests than the query pool
// has connections are sent.
func TestAttack_SQL_HTTPClientCancelFreesAgent(t *testing.T) {
	ag, started, done := queryServer(t, core.QueryLimits{Steps: -1})
	for i := 0; i < 4; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := ag.Query(ctx, &v1.QueryRequest{Sql: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"})
			errc <- err
		}()
		<-started
		cancel()
		if err := <-errc; connect.CodeOf(err) != connect.CodeCanceled {
			t.Fatalf("cancelled query: %v", err)
		}
		<-done // the server's handler returned: the statement stopped
	}
	wantKeys(t, ag)
}

// The server's step budget and result bound stop a query with
// RESOURCE_EXHAUSTED, naming the limit.
func TestAttack_SQL_HTTPLimits(t *testing.T) {
	ag, _, _ := queryServer(t, core.QueryLimits{Steps: 100_000, MaxBytes: 4096})
	ctx := context.Background()
	_, err := ag.Query(ctx, &v1.QueryRequest{Sql: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"})
	if connect.CodeOf(err) != connect.CodeResourceExhausted || !strings.Contains(apiError(t, err).Message, "step budget of 100000 steps") {
		t.Errorf("endless CTE: %v", err)
	}
	_, err = ag.Query(ctx, &v1.QueryRequest{Sql: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x < 1000) SELECT printf('%0100d', x) FROM c"})
	if connect.CodeOf(err) != connect.CodeResourceExhausted || !strings.Contains(apiError(t, err).Message, "result too large: more than 4096 bytes") {
		t.Errorf("large result: %v", err)
	}
	wantKeys(t, ag)
}
