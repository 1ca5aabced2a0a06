package rpc

import (
	"context"
	"crypto/sha256"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/agentfs-go/agentfs/core"
	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1connect"
)

// startHTTPDir serves the agents of dir (which the test prepares).
func startHTTPDir(t *testing.T, dir string) *httptest.Server {
	t.Helper()
	d, err := NewAgentDir(dir, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewHTTPHandler(d, HTTPOptions{Version: "test"}))
	t.Cleanup(func() { srv.Close(); d.Close() })
	return srv
}

func listIDs(t *testing.T, admin agentfsv1connect.AgentServiceClient) string {
	t.Helper()
	l, err := admin.ListAgents(context.Background(), &v1.ListAgentsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range l.Agents {
		ids = append(ids, a.Id)
	}
	return strings.Join(ids, ",")
}

// Files in the served directory that are not AgentFS databases are
// refused without a byte of them changing, and not as internal errors.
func TestAttack_Open_HTTPRefusedFileUnchanged(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{"empty.db": nil, "random.db": []byte(strings.Repeat("\x17garbage!", 1000))}
	for n, b := range files {
		os.WriteFile(filepath.Join(dir, n), b, 0o644)
	}
	srv := startHTTPDir(t, dir)
	for n := range files {
		p := filepath.Join(dir, n)
		before, _ := os.ReadFile(p)
		id := strings.TrimSuffix(n, ".db")
		if strings.ContainsRune(id, 0) {
			continue // not a valid HTTP header value: the client refuses to send it
		}
		fsc := agentfsv1connect.NewFilesystemServiceClient(srv.Client(), srv.URL, headers("", id))
		_, err := fsc.Stat(context.Background(), &v1.StatRequest{Path: "/"})
		if connect.CodeOf(err) != connect.CodeFailedPrecondition {
			t.Errorf("%s: %v, want FAILED_PRECONDITION", n, err)
		}
		after, _ := os.ReadFile(p)
		if sha256.Sum256(before) != sha256.Sum256(after) {
			t.Errorf("%s changed by a refused open", n)
		}
	}
}

// A creation refused for its options leaves nothing: ListAgents does not
// show it and a retry with valid options succeeds.
func TestAttack_Open_HTTPCreateInvalidChunkSize(t *testing.T) {
	dir := t.TempDir()
	srv := startHTTPDir(t, dir)
	admin := agentfsv1connect.NewAgentServiceClient(srv.Client(), srv.URL)
	ctx := context.Background()
	_, err := admin.CreateAgent(ctx, &v1.CreateAgentRequest{Id: "x", ChunkSize: 3})
	if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "chunk size") {
		t.Fatalf("chunk size 3: %v, want INVALID_ARGUMENT", err)
	}
	if got := listIDs(t, admin); got != "" {
		t.Fatalf("ListAgents after a refused creation: %q", got)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("the refused creation left %d files", len(ents))
	}
	if _, err := admin.CreateAgent(ctx, &v1.CreateAgentRequest{Id: "x", ChunkSize: 1024}); err != nil {
		t.Fatal(err)
	}
	if got := listIDs(t, admin); got != "x" {
		t.Fatalf("ListAgents: %q", got)
	}
}

// Ids that are not one plain file name are INVALID_ARGUMENT, with a
// message that matches the rule (and states the length limit).
func TestAttack_ID_HTTPInvalidIDs(t *testing.T) {
	srv := startHTTPDir(t, t.TempDir())
	admin := agentfsv1connect.NewAgentServiceClient(srv.Client(), srv.URL)
	ctx := context.Background()
	for _, id := range []string{".", "..", "../x", "a/b", "/etc/passwd", "a\x00b", "a.b", strings.Repeat("a", 300)} {
		_, err := admin.CreateAgent(ctx, &v1.CreateAgentRequest{Id: id})
		if connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Errorf("CreateAgent(%q): %v, want INVALID_ARGUMENT", id, err)
			continue
		}
		if strings.Contains(err.Error(), "digits, '.'") {
			t.Errorf("CreateAgent(%q): the message allows '.': %v", id, err)
		}
		if strings.ContainsRune(id, 0) {
			continue // not a valid HTTP header value: the client refuses to send it
		}
		fsc := agentfsv1connect.NewFilesystemServiceClient(srv.Client(), srv.URL, headers("", id))
		if _, err := fsc.Stat(ctx, &v1.StatRequest{Path: "/"}); connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Errorf("Stat as %q: %v, want INVALID_ARGUMENT", id, err)
		}
	}
	_, err := admin.CreateAgent(ctx, &v1.CreateAgentRequest{Id: strings.Repeat("a", 300)})
	if !strings.Contains(err.Error(), "at most 128") {
		t.Errorf("300-byte id: %v, want the limit stated", err)
	}
}

// A symbolic link in the served directory cannot make an agent id reach
// a database outside it: the agent is refused and not listed.
func TestAttack_ID_HTTPSymlinkOutside(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret.db")
	a, err := core.Open(context.Background(), outside, core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "evil.db")); err != nil {
		t.Fatal(err)
	}
	srv := startHTTPDir(t, dir)
	ctx := context.Background()
	fsc := agentfsv1connect.NewFilesystemServiceClient(srv.Client(), srv.URL, headers("", "evil"))
	if _, err := fsc.Stat(ctx, &v1.StatRequest{Path: "/"}); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Fatalf("agent behind a symlink: %v, want PERMISSION_DENIED", err)
	}
	admin := agentfsv1connect.NewAgentServiceClient(srv.Client(), srv.URL)
	if _, err := admin.CreateAgent(ctx, &v1.CreateAgentRequest{Id: "evil", ExistOk: true}); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Fatalf("CreateAgent over a symlink: %v, want PERMISSION_DENIED", err)
	}
	if got := listIDs(t, admin); got != "" {
		t.Fatalf("ListAgents shows %q", got)
	}
}

// An invalid snapshot name is the caller's mistake: INVALID_ARGUMENT,
// for creation and restore alike.
func TestAttack_Open_HTTPInvalidSnapshotName(t *testing.T) {
	srv := startHTTPDir(t, t.TempDir())
	ctx := context.Background()
	admin := agentfsv1connect.NewAgentServiceClient(srv.Client(), srv.URL, headers("", "a"))
	if _, err := admin.CreateAgent(ctx, &v1.CreateAgentRequest{Id: "a"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"../../x", "a/b", ".hidden", strings.Repeat("s", 200)} {
		if _, err := admin.CreateSnapshot(ctx, &v1.CreateSnapshotRequest{Name: name}); connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Errorf("CreateSnapshot(%q): %v, want INVALID_ARGUMENT", name, err)
		}
		if _, err := admin.RestoreSnapshot(ctx, &v1.RestoreSnapshotRequest{Name: name}); connect.CodeOf(err) != connect.CodeInvalidArgument {
			t.Errorf("RestoreSnapshot(%q): %v, want INVALID_ARGUMENT", name, err)
		}
	}
	if _, err := admin.RestoreSnapshot(ctx, &v1.RestoreSnapshotRequest{Name: "never"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("RestoreSnapshot of an unknown name: %v, want NOT_FOUND", err)
	}
}

// The stdio handshake's id is checked by the same rule: never a path,
// never outside the agents' directory.
func TestAttack_ID_StdioHandshake(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"..", "../x", "/etc/passwd", "a/b", "a.b", strings.Repeat("a", 300)} {
		_, _, _, err := openForHello(context.Background(), &v1.OpenOptions{Id: id, Dir: dir})
		if Kind(err) != v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT {
			t.Errorf("id %q: %v, want INVALID_ARGUMENT", id, err)
		}
	}
	_, _, _, err := openForHello(context.Background(), &v1.OpenOptions{Id: "ok", Dir: dir, ChunkSize: 7})
	if ToProto(err).Kind != v1.ErrorKind_ERROR_KIND_INVALID_ARGUMENT {
		t.Errorf("chunk size 7: %v, want INVALID_ARGUMENT", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("refused handshakes left %d files", len(ents))
	}
}
