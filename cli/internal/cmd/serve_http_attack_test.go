package cmd

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A real "agentfs serve http" process running a script that never ends
// ("sed :a;ba" once ran forever and the server ignored SIGTERM) exits
// with status 0 at SIGTERM: it cancels the script and stops. The wait
// is bounded only to fail instead of hanging.
func TestAttack_Limits_ServeHTTPSigterm(t *testing.T) {
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	srv := exec.Command(exe, "serve", "http", "--listen", "127.0.0.1:0", "--data", filepath.Join(dir, "agents"))
	srv.Stderr = stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	gone := false
	defer func() {
		if !gone {
			srv.Process.Kill()
			<-exited
		}
	}()
	var url string
	guard := time.Now().Add(30 * time.Second)
	for {
		if m := httpAddrLine.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
			break
		}
		if time.Now().After(guard) {
			t.Fatalf("no address on stderr:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code, out := post(t, url, "AgentService/CreateAgent", "", "", `{"id":"a"}`); code != 200 {
		t.Fatalf("CreateAgent: %d %v", code, out)
	}
	// Ask for the hardened profile, where the loop ran forever.
	execDone := make(chan int, 1)
	go func() {
		// Not post: t.Fatal must not run off the test's goroutine, and
		// the connection may be cut at shutdown.
		body := `{"script":"echo > /started; echo a | sed \":a;ba\"","limits":"hardened"}`
		req, _ := http.NewRequest("POST", url+"/agentfs.v1.SandboxService/Exec", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Agentfs-Agent", "a")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			execDone <- 0
			return
		}
		resp.Body.Close()
		execDone <- resp.StatusCode
	}()
	for {
		if code, _ := post(t, url, "FilesystemService/Stat", "", "a", `{"path":"/started"}`); code == 200 {
			break
		}
		if time.Now().After(guard) {
			t.Fatalf("the script did not start:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		gone = true
		if err != nil {
			t.Errorf("serve http exited with %v after SIGTERM, want status 0; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("serve http still running 30 s after SIGTERM; stderr:\n%s", stderr.String())
	}
	if code := <-execDone; code == 200 {
		t.Errorf("the Exec in flight answered 200 at shutdown")
	}
}
