package sandbox_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfs-go/agentfs/core/sandbox"
	"github.com/agentfs-go/agentfs/core/sandbox/commands"
	"github.com/agentfs-go/agentfs/core/toolcalls"
)

const secret = "s3cr3t-token-9f8e7d"

// netServer is an HTTP server on loopback that records what it receives.
type netServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []*http.Request
	body []string
}

func (s *netServer) last() (*http.Request, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.seen) == 0 {
		return nil, ""
	}
	return s.seen[len(s.seen)-1], s.body[len(s.body)-1]
}

func (s *netServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen)
}

func newNetServer(t *testing.T, other string) *netServer {
	s := &netServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "hello from server\n")
	})
	mux.HandleFunc("/auth-check", func(w http.ResponseWriter, r *http.Request) {
		// Says whether the secret came through, without echoing it.
		if r.Header.Get("X-Api-Key") == secret && r.Header.Get("Authorization") == "Bearer "+secret {
			fmt.Fprint(w, "auth-ok\n")
			return
		}
		w.WriteHeader(401)
		fmt.Fprint(w, "auth-missing\n")
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s ct=%s body=%s\n", r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Content-Type"), b)
	})
	mux.HandleFunc("/status/404", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(404)
		fmt.Fprint(w, "not here\n")
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("x", 10_000)))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(5 * time.Second):
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/redirect-local", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/hello", http.StatusFound)
	})
	mux.HandleFunc("/redirect-other", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other+"/hello", http.StatusFound)
	})
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(b)))
		s.mu.Lock()
		s.seen = append(s.seen, r.Clone(r.Context()))
		s.body = append(s.body, string(b))
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func netSandbox(t *testing.T, rules []sandbox.NetRule, lim *sandbox.Limits) (*sandbox.Sandbox, func() []toolcalls.Call) {
	t.Helper()
	opts := sandbox.Options{Policy: sandbox.Policy{Net: rules, Env: map[string]string{"LANG": "C"}}}
	if lim != nil {
		opts.Limits = *lim
	}
	a, sb := newSandbox(t, opts)
	return sb, func() []toolcalls.Call {
		calls, err := a.Tools.List(ctx, toolcalls.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		return calls
	}
}

func TestCurl_DeniedByDefault(t *testing.T) {
	srv := newNetServer(t, "")
	sb, _ := netSandbox(t, nil, nil)
	res := run(t, sb, "curl -s "+srv.URL+"/hello")
	if res.ExitCode != 7 || res.Stdout != "" {
		t.Fatalf("got %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	res = run(t, sb, "curl -sS "+srv.URL+"/hello")
	if res.ExitCode != 7 || !strings.Contains(res.Stderr, "curl: (7) blocked by sandbox network policy:") {
		t.Fatalf("got %d %q", res.ExitCode, res.Stderr)
	}
	if srv.count() != 0 {
		t.Fatal("the server was reached")
	}
}

func TestCurl_LoopbackNeedsAllowPrivate(t *testing.T) {
	srv := newNetServer(t, "")
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	// The prefix allows the URL, but the address is loopback.
	sb, _ := netSandbox(t, []sandbox.NetRule{
		{Prefix: srv.URL + "/"},
		{Prefix: fmt.Sprintf("http://localhost:%d/", port)},
	}, nil)
	for _, u := range []string{srv.URL + "/hello", fmt.Sprintf("http://localhost:%d/hello", port)} {
		res := run(t, sb, "curl -sS "+u)
		if res.ExitCode != 7 || !strings.Contains(res.Stderr, "blocked by sandbox network policy") || !strings.Contains(res.Stderr, "private, loopback or link-local") {
			t.Fatalf("%s: got %d %q %q", u, res.ExitCode, res.Stdout, res.Stderr)
		}
	}
	if srv.count() != 0 {
		t.Fatal("the server was reached")
	}
	// With AllowPrivate, localhost resolves and connects.
	sb, _ = netSandbox(t, []sandbox.NetRule{{Prefix: fmt.Sprintf("http://localhost:%d/", port), AllowPrivate: true}}, nil)
	res := run(t, sb, fmt.Sprintf("curl -sS http://localhost:%d/hello", port))
	if res.ExitCode != 0 || res.Stdout != "hello from server\n" {
		t.Fatalf("got %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
}

func TestCurl_PrefixMatching(t *testing.T) {
	srv := newNetServer(t, "")
	sb, _ := netSandbox(t, []sandbox.NetRule{{Prefix: srv.URL + "/hello", AllowPrivate: true}}, nil)
	if res := run(t, sb, "curl -s "+srv.URL+"/hello"); res.ExitCode != 0 || res.Stdout != "hello from server\n" {
		t.Fatalf("got %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	for _, u := range []string{srv.URL + "/hellox", srv.URL + "/echo", srv.URL + "/hello/../echo", strings.Replace(srv.URL, "http://", "https://", 1) + "/hello"} {
		if res := run(t, sb, "curl -sS '"+u+"'"); res.ExitCode != 7 {
			t.Errorf("%s: got %d %q", u, res.ExitCode, res.Stderr)
		}
	}
	if res := run(t, sb, "curl -sS file:///etc/passwd"); res.ExitCode == 0 || res.Stdout != "" {
		t.Errorf("file: got %d %q", res.ExitCode, res.Stdout)
	}
}

func TestCurl_HeaderInjection(t *testing.T) {
	srv := newNetServer(t, "")
	sb, calls := netSandbox(t, []sandbox.NetRule{{
		Prefix:       srv.URL + "/",
		Headers:      map[string]string{"X-Api-Key": secret, "Authorization": "Bearer " + secret},
		AllowPrivate: true,
	}}, nil)
	script := `curl -s ` + srv.URL + `/auth-check
curl -s -H 'X-Api-Key: forged' -H 'Authorization: Bearer forged' -u user:pw ` + srv.URL + `/auth-check
curl -si ` + srv.URL + `/hello
curl -s -w '%{http_code} %{url_effective}\n' ` + srv.URL + `/hello
env; set; export -p; declare -p
curl -sS -v ` + srv.URL + `/hello
curl -sS ` + srv.URL + `/status/404 -f
`
	res := run(t, sb, script)
	if !strings.HasPrefix(res.Stdout, "auth-ok\nauth-ok\n") {
		t.Fatalf("the injected headers did not reach the server or were overridden: %q %q", res.Stdout, res.Stderr)
	}
	req, _ := srv.last()
	if req.Header.Get("X-Api-Key") != secret {
		t.Fatalf("server saw %v", req.Header)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for _, r := range srv.seen {
		if got := r.Header.Values("X-Api-Key"); len(got) != 1 || got[0] != secret {
			t.Fatalf("X-Api-Key values %q: the script's header must be replaced, not added", got)
		}
	}
	if strings.Contains(res.Stdout, secret) || strings.Contains(res.Stderr, secret) {
		t.Fatalf("the secret leaked to the script's output:\n%s\n%s", res.Stdout, res.Stderr)
	}
	for _, c := range calls() {
		all := string(c.Parameters) + string(c.Result)
		if c.Error != nil {
			all += *c.Error
		}
		if strings.Contains(all, secret) {
			t.Fatalf("the secret is in the tool-call log: %s", all)
		}
	}
	if !strings.Contains(res.Stderr, "curl: option -v: is not supported") || !strings.Contains(res.Stderr, "curl: (22) The requested URL returned error: 404") {
		t.Fatalf("stderr %q", res.Stderr)
	}
	if !strings.Contains(res.Stdout, "200 "+srv.URL+"/hello\n") || !strings.Contains(res.Stdout, "HTTP/1.1 200 OK\r\n") {
		t.Fatalf("stdout %q", res.Stdout)
	}
}

func TestCurl_Methods(t *testing.T) {
	srv := newNetServer(t, "")
	sb, _ := netSandbox(t, []sandbox.NetRule{
		{Prefix: srv.URL + "/", Methods: []string{"GET", "HEAD"}, AllowPrivate: true},
		{Prefix: srv.URL + "/echo", Methods: []string{"POST"}, AllowPrivate: true},
	}, nil)
	res := run(t, sb, `curl -sS -X DELETE `+srv.URL+`/hello`)
	if res.ExitCode != 7 || !strings.Contains(res.Stderr, "method DELETE is not allowed") {
		t.Fatalf("got %d %q", res.ExitCode, res.Stderr)
	}
	res = run(t, sb, `curl -sS -d a=1 `+srv.URL+`/hello`)
	if res.ExitCode != 7 {
		t.Fatalf("POST /hello: got %d %q", res.ExitCode, res.Stderr)
	}
	// -d with @file from the agent filesystem; several -d joined by &.
	res = run(t, sb, `printf 'x=1\ny=2\n' > /data/form.txt; curl -sS -d @form.txt -d z=3 `+srv.URL+`/echo`)
	if res.ExitCode != 0 || res.Stdout != "POST /echo  ct=application/x-www-form-urlencoded body=x=1y=2&z=3\n" {
		t.Fatalf("got %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	res = run(t, sb, `curl -sS --data-binary @form.txt -H 'Content-Type: text/plain' `+srv.URL+`/echo`)
	if res.ExitCode != 0 || res.Stdout != "POST /echo  ct=text/plain body=x=1\ny=2\n\n" {
		t.Fatalf("got %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	res = run(t, sb, `curl -sS -G -d q=go -d n=2 `+srv.URL+`/echo`)
	if res.ExitCode != 0 || res.Stdout != "GET /echo q=go&n=2 ct= body=\n" {
		t.Fatalf("got %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	res = run(t, sb, `curl -sSI `+srv.URL+`/hello`)
	if res.ExitCode != 0 || !strings.HasPrefix(res.Stdout, "HTTP/1.1 200 OK\r\n") || strings.Contains(res.Stdout, "hello from server") {
		t.Fatalf("got %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	res = run(t, sb, `curl -sS -o out/page.txt `+srv.URL+`/hello; echo rc=$?; mkdir -p out; curl -sS -o out/page.txt `+srv.URL+`/hello && cat out/page.txt`)
	if res.Stdout != "rc=23\nhello from server\n" {
		t.Fatalf("got %q %q", res.Stdout, res.Stderr)
	}
	res = run(t, sb, `curl -sS -u bob:pw -H 'X-Trace: 1' `+srv.URL+`/hello`)
	if req, _ := srv.last(); res.ExitCode != 0 || req.Header.Get("Authorization") != "Basic Ym9iOnB3" || req.Header.Get("X-Trace") != "1" {
		t.Fatalf("-u -H: got %d %q %v", res.ExitCode, res.Stderr, req.Header)
	}
	res = run(t, sb, `curl -s -o /dev/null -w '%{http_code}' `+srv.URL+`/status/404; echo " rc=$?"`)
	if res.Stdout != "404 rc=0\n" {
		t.Fatalf("got %q %q", res.Stdout, res.Stderr)
	}
}

func TestCurl_Redirects(t *testing.T) {
	denied := newNetServer(t, "")
	srv := newNetServer(t, denied.URL)
	sb, _ := netSandbox(t, []sandbox.NetRule{{Prefix: srv.URL + "/", AllowPrivate: true, Headers: map[string]string{"X-Api-Key": secret}}}, nil)
	res := run(t, sb, `curl -sSL `+srv.URL+`/redirect-local`)
	if res.ExitCode != 0 || res.Stdout != "hello from server\n" {
		t.Fatalf("got %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	res = run(t, sb, `curl -sSL `+srv.URL+`/redirect-other`)
	if res.ExitCode != 7 || !strings.Contains(res.Stderr, "blocked by sandbox network policy") {
		t.Fatalf("got %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	if denied.count() != 0 {
		t.Fatal("the redirect reached a denied host")
	}
	// Without -L the redirect is not followed.
	res = run(t, sb, `curl -s -w '%{http_code}' `+srv.URL+`/redirect-other`)
	if res.ExitCode != 0 || !strings.HasSuffix(res.Stdout, "302") {
		t.Fatalf("got %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	// A redirect to another allowed host does not carry the first rule's headers.
	sb, _ = netSandbox(t, []sandbox.NetRule{
		{Prefix: srv.URL + "/", AllowPrivate: true, Headers: map[string]string{"X-Api-Key": secret}},
		{Prefix: denied.URL + "/", AllowPrivate: true},
	}, nil)
	res = run(t, sb, `curl -sSL `+srv.URL+`/redirect-other`)
	if res.ExitCode != 0 || res.Stdout != "hello from server\n" {
		t.Fatalf("got %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	if r, _ := denied.last(); r == nil || r.Header.Get("X-Api-Key") != "" {
		t.Fatalf("the other host got %v", r)
	}
}

func TestCurl_Limits(t *testing.T) {
	srv := newNetServer(t, "")
	lim := sandbox.Normal
	lim.MaxResponseBytes = 1000
	lim.NetTimeout = 3 * time.Second
	sb, _ := netSandbox(t, []sandbox.NetRule{{Prefix: srv.URL + "/", AllowPrivate: true}}, &lim)
	res := run(t, sb, `curl -sS `+srv.URL+`/big`)
	if res.ExitCode != 63 || res.Stdout != "" || !strings.Contains(res.Stderr, "Maximum file size exceeded") {
		t.Fatalf("got %d %d %q", res.ExitCode, len(res.Stdout), res.Stderr)
	}
	// /slow answers after 5 s: exit 28 with the 300 ms in the message
	// shows which deadline ended it, with no clock in the test.
	res = run(t, sb, `curl -sS --max-time 0.3 `+srv.URL+`/slow`)
	if res.ExitCode != 28 || !strings.Contains(res.Stderr, "curl: (28) Operation timed out after 300 milliseconds") {
		t.Fatalf("got %d %q", res.ExitCode, res.Stderr)
	}
	// The limit's timeout applies without --max-time, and --max-time cannot extend it.
	lim.NetTimeout = 300 * time.Millisecond
	sb, _ = netSandbox(t, []sandbox.NetRule{{Prefix: srv.URL + "/", AllowPrivate: true}}, &lim)
	res = run(t, sb, `curl -sS --max-time 100 `+srv.URL+`/slow`)
	if res.ExitCode != 28 || !strings.Contains(res.Stderr, "after 300 milliseconds") {
		t.Fatalf("got %d %q", res.ExitCode, res.Stderr)
	}
}

func TestCurl_PolicyValidation(t *testing.T) {
	a := openAgent(t)
	for _, p := range []string{"example.com", "ftp://x/", "https://user:pw@x/", ""} {
		if _, err := sandbox.New(a, sandbox.Options{Policy: sandbox.Policy{Net: []sandbox.NetRule{{Prefix: p}}}}); err == nil {
			t.Errorf("prefix %q accepted", p)
		}
	}
}

func TestPublicIP(t *testing.T) {
	for _, s := range []string{"127.0.0.1", "10.1.2.3", "192.168.0.1", "172.16.5.4", "169.254.169.254", "::1", "fe80::1", "fc00::1", "0.0.0.0", "::", "::ffff:127.0.0.1", "100.64.0.1", "224.0.0.1"} {
		if sandboxPublic(s) {
			t.Errorf("%s reported public", s)
		}
	}
	for _, s := range []string{"8.8.8.8", "1.1.1.1", "2606:4700::1111"} {
		if !sandboxPublic(s) {
			t.Errorf("%s reported private", s)
		}
	}
}

func sandboxPublic(s string) bool { return commands.PublicIP(net.ParseIP(s)) }
