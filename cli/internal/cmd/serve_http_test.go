package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

var httpAddrLine = regexp.MustCompile(`at (http://[^ ]+) `)

// serveAPI starts "agentfs serve http" in-process and returns its URL.
func serveAPI(t *testing.T, args ...string) (url string, stderr *syncBuffer, stop func()) {
	t.Helper()
	stderr = &syncBuffer{}
	cancel, wait := startCLI(t, strings.NewReader(""), io.Discard, stderr, append([]string{"serve", "http"}, args...)...)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if m := httpAddrLine.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no address on stderr:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return url, stderr, func() {
		t.Helper()
		cancel()
		if err := wait(); err != nil {
			t.Errorf("serve http: %v; stderr:\n%s", err, stderr.String())
		}
	}
}

// post calls a procedure with Connect's JSON encoding.
func post(t *testing.T, url, proc, token, agent, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/agentfs.v1."+proc, bytes.NewBufferString(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if agent != "" {
		req.Header.Set("Agentfs-Agent", agent)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestServeHTTP(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("AGENTFS_TOKEN", "s3cret")
	url, stderr, stop := serveAPI(t, "--listen", "127.0.0.1:0", "--data", "agents")
	if code, _ := post(t, url, "AgentService/ListAgents", "", "", "{}"); code != http.StatusUnauthorized {
		t.Errorf("no token: HTTP %d, want 401", code)
	}
	if code, out := post(t, url, "AgentService/CreateAgent", "s3cret", "", `{"id":"a1"}`); code != 200 {
		t.Fatalf("CreateAgent: %d %v", code, out)
	}
	if code, out := post(t, url, "FilesystemService/WriteFile", "s3cret", "a1", `{"path":"/x.txt","data":"aGk="}`); code != 200 {
		t.Fatalf("WriteFile: %d %v", code, out)
	}
	code, out := post(t, url, "FilesystemService/Stat", "s3cret", "a1", `{"path":"/nope"}`)
	if code != http.StatusNotFound || out["code"] != "not_found" {
		t.Errorf("Stat missing: %d %v", code, out)
	}
	stop()
	log := stderr.String()
	if strings.Contains(log, "s3cret") {
		t.Errorf("the token reached the log:\n%s", log)
	}
	for _, w := range []string{"POST /agentfs.v1.FilesystemService/WriteFile agent=a1 status=200", "status=401", "shutting down"} {
		if !strings.Contains(log, w) {
			t.Errorf("log lacks %q:\n%s", w, log)
		}
	}
	// The agent is an ordinary database: the CLI reads what HTTP wrote.
	if got := mustRun(t, "fs", "agents/a1.db", "cat", "/x.txt"); got != "hi" {
		t.Errorf("fs cat = %q", got)
	}
}

func TestServeHTTPNeedsTokenOffLoopback(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("AGENTFS_TOKEN", "")
	wantFail(t, 2, []string{"serve", "http", "--listen", "0.0.0.0:0"}, "needs a token", "AGENTFS_TOKEN")
	t.Setenv("AGENTFS_TOKEN", "s3cret")
	_, stderr, stop := serveAPI(t, "--listen", "0.0.0.0:0")
	stop()
	if !strings.Contains(stderr.String(), "warning") || !strings.Contains(stderr.String(), "not a loopback address") {
		t.Errorf("no warning off loopback:\n%s", stderr.String())
	}
}

// TestServeHTTPProcessCaps: --max-processes and --max-shells bound each
// agent's process table; past them StartProcess and OpenShell fail with
// RESOURCE_EXHAUSTED (EAGAIN: the table is full), and bad values are usage errors.
func TestServeHTTPProcessCaps(t *testing.T) {
	t.Chdir(t.TempDir())
	url, _, stop := serveAPI(t, "--listen", "127.0.0.1:0", "--data", "agents", "--quiet", "--max-processes", "2", "--max-shells", "1")
	defer stop()
	if code, out := post(t, url, "AgentService/CreateAgent", "", "", `{"id":"a1"}`); code != 200 {
		t.Fatalf("CreateAgent: %d %v", code, out)
	}
	for i := 0; i < 2; i++ {
		if code, out := post(t, url, "ProcessService/StartProcess", "", "a1", `{"exec":{"script":"sleep 600"}}`); code != 200 {
			t.Fatalf("StartProcess %d: %d %v", i+1, code, out)
		}
	}
	code, out := post(t, url, "ProcessService/StartProcess", "", "a1", `{"exec":{"script":"sleep 600"}}`)
	if code != http.StatusTooManyRequests || out["code"] != "resource_exhausted" || !strings.Contains(fmt.Sprint(out["message"]), "2 processes already") {
		t.Errorf("a third process with --max-processes 2: %d %v", code, out)
	}
	if code, out := post(t, url, "ProcessService/OpenShell", "", "a1", `{}`); code != 200 {
		t.Fatalf("OpenShell: %d %v", code, out)
	}
	code, out = post(t, url, "ProcessService/OpenShell", "", "a1", `{}`)
	if code != http.StatusTooManyRequests || out["code"] != "resource_exhausted" || !strings.Contains(fmt.Sprint(out["message"]), "1 shells already") {
		t.Errorf("a second shell with --max-shells 1: %d %v", code, out)
	}
	wantFail(t, 2, []string{"serve", "http", "--max-processes", "0"}, "--max-processes and --max-shells must be positive")
}
