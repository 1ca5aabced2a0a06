package rpc

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/agentfs-go/agentfs/core"
	v1 "github.com/agentfs-go/agentfs/core/api/agentfs/v1"
	"github.com/agentfs-go/agentfs/core/api/agentfs/v1/agentfsv1connect"
)

// Probes of serve http as an attacker on the network would send them:
// every procedure without the token, ids that try to leave the data
// directory, bodies that grow after decompression, tokens in logs.

// servedProcedures lists "/package.Service/Method" for every method of
// the services the HTTP handler serves, from the API's descriptors, so a
// procedure added later is probed too.
func servedProcedures(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, f := range []protoreflect.FileDescriptor{
		v1.File_agentfs_v1_filesystem_proto, v1.File_agentfs_v1_kv_proto, v1.File_agentfs_v1_tools_proto,
		v1.File_agentfs_v1_agent_proto, v1.File_agentfs_v1_sandbox_proto,
	} {
		for i := 0; i < f.Services().Len(); i++ {
			s := f.Services().Get(i)
			for j := 0; j < s.Methods().Len(); j++ {
				out = append(out, "/"+string(s.FullName())+"/"+string(s.Methods().Get(j).Name()))
			}
		}
	}
	if len(out) < 40 {
		t.Fatalf("only %d procedures found in the API descriptors", len(out))
	}
	return out
}

// postJSON sends a Connect unary call with a JSON body and the given headers.
func postJSON(t *testing.T, c *http.Client, url string, body []byte, hdr map[string]string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// dirNames lists a directory's entries, for "nothing was created" checks.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func startHTTPIn(t *testing.T, dir, token string, logTo io.Writer) (string, *http.Client) {
	t.Helper()
	ad, err := NewAgentDir(dir, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	o := HTTPOptions{Version: "test", Token: token, MaxRequestBytes: 1 << 20}
	if logTo != nil {
		o.AccessLog = log.New(logTo, "", 0)
	}
	srv := httptest.NewUnstartedServer(NewHTTPHandler(ad, o))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(func() { srv.Close(); ad.Close() })
	return srv.URL, srv.Client()
}

func TestAttack_HTTP_EveryProcedureNeedsTheToken(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "data")
	url, c := startHTTPIn(t, data, "s3cret", nil)
	// An agent exists, so a call that got through would reach it.
	admin := agentfsv1connect.NewAgentServiceClient(c, url, headers("s3cret", ""))
	if _, err := admin.CreateAgent(context.Background(), &v1.CreateAgentRequest{Id: "victim"}); err != nil {
		t.Fatal(err)
	}
	before := dirNames(t, data)
	attempts := []map[string]string{
		{AgentHeader: "victim"},
		{AgentHeader: "victim", "Authorization": "Bearer wrong"},
		{AgentHeader: "victim", "Authorization": "Bearer s3cret "},
		{AgentHeader: "victim", "Authorization": "Bearer s3cre"},
		{AgentHeader: "victim", "Authorization": "s3cret"},
		{AgentHeader: "victim", "Authorization": "Basic czNjcmV0Og=="},
		{AgentHeader: "victim", "X-Agentfs-Token": "s3cret"},
	}
	procs := servedProcedures(t)
	tried := 0
	for _, p := range procs {
		t.Run(strings.TrimPrefix(p, "/agentfs.v1."), func(t *testing.T) {
			for i, h := range attempts {
				body := []byte(`{"path":"/pwned","data":"cHduZWQ=","createParents":true,"id":"intruder","sql":"select 1","script":"echo pwned > /pwned","key":"k","value":"1"}`)
				target := url + p
				if i == 0 {
					target += "?token=s3cret&access_token=s3cret"
				}
				code, resp := postJSON(t, c, target, body, h)
				tried++
				if code != http.StatusUnauthorized || !bytes.Contains(resp, []byte("unauthenticated")) {
					t.Errorf("%s with %v: HTTP %d %s, want 401 unauthenticated", p, h, code, resp)
				}
			}
		})
	}
	if after := dirNames(t, data); !slices.Equal(before, after) {
		t.Errorf("refused calls changed the data directory: %v -> %v", before, after)
	}
	fsc := agentfsv1connect.NewFilesystemServiceClient(c, url, headers("s3cret", "victim"))
	if _, err := fsc.Stat(context.Background(), &v1.StatRequest{Path: "/pwned"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("/pwned after refused calls: %v", err)
	}
	t.Logf("%d unauthenticated calls over %d procedures, all refused", tried, len(procs))
}

func TestAttack_HTTP_TokenNeverLogged(t *testing.T) {
	var logBuf bytes.Buffer
	url, c := startHTTPIn(t, t.TempDir(), "tok-9f8e7d6c5b4a", &logBuf)
	ctx := context.Background()
	good := agentfsv1connect.NewAgentServiceClient(c, url, headers("tok-9f8e7d6c5b4a", ""))
	if _, err := good.CreateAgent(ctx, &v1.CreateAgentRequest{Id: "a"}); err != nil {
		t.Fatal(err)
	}
	bad := agentfsv1connect.NewAgentServiceClient(c, url, headers("guess-1a2b3c4d5e", ""))
	if _, err := bad.ListAgents(ctx, &v1.ListAgentsRequest{}); connect.CodeOf(err) != connect.CodeUnauthenticated {
		t.Fatalf("wrong token: %v", err)
	}
	out := logBuf.String()
	if strings.Count(out, "\n") < 2 {
		t.Fatalf("access log has fewer lines than requests:\n%s", out)
	}
	for _, secret := range []string{"tok-9f8e7d6c5b4a", "guess-1a2b3c4d5e", "Bearer"} {
		if strings.Contains(out, secret) {
			t.Errorf("access log contains %q:\n%s", secret, out)
		}
	}
}

func TestAttack_HTTP_AgentIDsStayInTheDataDirectory(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "data")
	url, c := startHTTPIn(t, data, "", nil)
	// A database outside the data directory that a traversal would reach.
	outside, err := core.Open(context.Background(), filepath.Join(root, "outside.db"), core.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	outside.Close()
	rootBefore, dataBefore := dirNames(t, root), dirNames(t, data)
	ctx := context.Background()
	admin := agentfsv1connect.NewAgentServiceClient(c, url)
	ids := []string{"../outside", "..", ".", "/etc/passwd", "a/b", "a\\b", "data/../../outside",
		"%2e%2e%2foutside", "a\x00b", "a\nb", " ", "", strings.Repeat("a", 300), "../" + strings.Repeat("x", 5000)}
	for _, id := range ids {
		t.Run(strconv.Quote(id[:min(len(id), 40)]), func(t *testing.T) {
			_, err := admin.CreateAgent(ctx, &v1.CreateAgentRequest{Id: id})
			if code := connect.CodeOf(err); code != connect.CodeInvalidArgument {
				t.Errorf("CreateAgent(%q): %v, want invalid argument", id, err)
			}
			if strings.ContainsAny(id, "\x00\n") || id == "" {
				return // not a valid header value; the HTTP client refuses to send it
			}
			fsc := agentfsv1connect.NewFilesystemServiceClient(c, url, headers("", id))
			_, err = fsc.ReadFile(ctx, &v1.ReadFileRequest{Path: "/"})
			if code := connect.CodeOf(err); code != connect.CodeInvalidArgument && code != connect.CodeNotFound {
				t.Errorf("ReadFile with agent %q: %v, want invalid argument or not found", id, err)
			}
		})
	}
	if got := dirNames(t, root); !slices.Equal(rootBefore, got) {
		t.Errorf("hostile ids changed the directory above the data directory: %v -> %v", rootBefore, got)
	}
	if got := dirNames(t, data); !slices.Equal(dataBefore, got) {
		t.Errorf("hostile ids changed the data directory: %v -> %v", dataBefore, got)
	}
}

func TestAttack_HTTP_CompressedBodyOverTheLimit(t *testing.T) {
	data := t.TempDir()
	url, c := startHTTPIn(t, data, "", nil)
	admin := agentfsv1connect.NewAgentServiceClient(c, url)
	if _, err := admin.CreateAgent(context.Background(), &v1.CreateAgentRequest{Id: "a"}); err != nil {
		t.Fatal(err)
	}
	// 64 MiB of zeros in a ~64 KiB gzip body: the limit (1 MiB) must
	// apply to what the body expands to, not to the bytes on the wire.
	var body bytes.Buffer
	zw := gzip.NewWriter(&body)
	zw.Write([]byte(`{"path":"/bomb","data":"`))
	chunk := bytes.Repeat([]byte("A"), 1<<20)
	for i := 0; i < 64; i++ {
		zw.Write(chunk)
	}
	zw.Write([]byte(`"}`))
	zw.Close()
	if body.Len() > 1<<20 {
		t.Fatalf("compressed body is %d bytes, not under the limit", body.Len())
	}
	code, resp := postJSON(t, c, url+agentfsv1connect.FilesystemServiceWriteFileProcedure, body.Bytes(),
		map[string]string{AgentHeader: "a", "Content-Encoding": "gzip"})
	if code == http.StatusOK || !bytes.Contains(resp, []byte("resource_exhausted")) {
		t.Errorf("gzip bomb: HTTP %d %.200s, want resource_exhausted", code, resp)
	}
	fsc := agentfsv1connect.NewFilesystemServiceClient(c, url, headers("", "a"))
	if _, err := fsc.Stat(context.Background(), &v1.StatRequest{Path: "/bomb"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("/bomb exists after the refused body: %v", err)
	}
}

// A web page that rebinds its DNS name to 127.0.0.1 reaches a loopback
// server with its own name in Host; a page on another origin sends
// Sec-Fetch-Site. Neither may reach an agent of a server without a token.
func TestAttack_HTTP_BrowserPagesCannotCallALoopbackServer(t *testing.T) {
	data := t.TempDir()
	url, c := startHTTPIn(t, data, "", nil)
	admin := agentfsv1connect.NewAgentServiceClient(c, url)
	if _, err := admin.CreateAgent(context.Background(), &v1.CreateAgentRequest{Id: "a"}); err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"path":"/pwned","data":"cHduZWQ="}`)
	for _, hdr := range []map[string]string{
		{"Host": "rebind.evil.example:7777"},
		{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"},
	} {
		hdr[AgentHeader] = "a"
		req, err := http.NewRequest(http.MethodPost, url+agentfsv1connect.FilesystemServiceWriteFileProcedure, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		if h := hdr["Host"]; h != "" {
			req.Host = h
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !bytes.Contains(b, []byte("permission_denied")) {
			t.Errorf("%v: HTTP %d %s, want 403 permission_denied", hdr, resp.StatusCode, b)
		}
	}
	fsc := agentfsv1connect.NewFilesystemServiceClient(c, url, headers("", "a"))
	if _, err := fsc.Stat(context.Background(), &v1.StatRequest{Path: "/pwned"}); connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("/pwned exists: %v", err)
	}
}
