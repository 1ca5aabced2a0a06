package httpguard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func serve(t *testing.T, o Options, method, host string, hdr map[string]string) (int, string, int) {
	t.Helper()
	reached := 0
	h := Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached++; io.WriteString(w, "ok") }), o)
	req := httptest.NewRequest(method, "http://"+host+"/agentfs.v1.FilesystemService/WriteFile", strings.NewReader("{}"))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String(), reached
}

func TestAttack_HTTPGuard_DNSRebinding(t *testing.T) {
	for _, host := range []string{"evil.example", "evil.example:7777", "127.0.0.1.nip.io:7777", "localhost.evil.example", "10.0.0.1:7777", "0.0.0.0:7777", ""} {
		if code, body, reached := serve(t, Options{}, http.MethodPost, host, nil); code != http.StatusForbidden || reached != 0 {
			t.Errorf("Host %q without a token: %d %q, reached the handler %d times", host, code, body, reached)
		}
	}
	for _, host := range []string{"127.0.0.1:7777", "localhost:7777", "LOCALHOST", "[::1]:7777", "127.0.0.2"} {
		if code, body, reached := serve(t, Options{}, http.MethodPost, host, nil); code != http.StatusOK || reached != 1 {
			t.Errorf("Host %q without a token: %d %q", host, code, body)
		}
	}
	// With a token, any name (behind a proxy, on a LAN) is fine.
	if code, _, _ := serve(t, Options{Token: "t"}, http.MethodPost, "agents.example:443", map[string]string{"Authorization": "Bearer t"}); code != http.StatusOK {
		t.Errorf("named host with the token: %d", code)
	}
}

func TestAttack_HTTPGuard_CrossOriginBrowserRequests(t *testing.T) {
	for _, hdr := range []map[string]string{
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site"},
		{"Origin": "https://evil.example"},
	} {
		if code, _, reached := serve(t, Options{}, http.MethodPost, "127.0.0.1:7777", hdr); code != http.StatusForbidden || reached != 0 {
			t.Errorf("POST with %v: %d, reached %d", hdr, code, reached)
		}
	}
	// Programs (no browser headers) and same-origin pages are served.
	for _, hdr := range []map[string]string{nil, {"Sec-Fetch-Site": "same-origin"}, {"Origin": "http://127.0.0.1:7777"}} {
		if code, body, _ := serve(t, Options{}, http.MethodPost, "127.0.0.1:7777", hdr); code != http.StatusOK {
			t.Errorf("POST with %v: %d %q", hdr, code, body)
		}
	}
}

func TestAttack_HTTPGuard_Token(t *testing.T) {
	o := Options{Token: "s3cret", Public: []string{"/healthz"}}
	for _, auth := range []string{"", "Bearer", "Bearer s3cre", "Bearer s3cret2", "bearer s3cret ", "s3cret", "Basic czNjcmV0"} {
		if code, _, reached := serve(t, o, http.MethodPost, "127.0.0.1", map[string]string{"Authorization": auth}); code != http.StatusUnauthorized || reached != 0 {
			t.Errorf("Authorization %q: %d, reached %d", auth, code, reached)
		}
	}
	if code, _, _ := serve(t, o, http.MethodPost, "127.0.0.1", map[string]string{"Authorization": "Bearer s3cret"}); code != http.StatusOK {
		t.Errorf("right token: %d", code)
	}
	h := Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }), o)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/healthz", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("/healthz without the token: %d", rec.Code)
	}
}

func TestLoopbackHost(t *testing.T) {
	for h, want := range map[string]bool{"127.0.0.1": true, "127.1.2.3:9": true, "[::1]:80": true, "::1": true, "localhost": true,
		"localhost:1": true, "example.com": false, "::": false, "0.0.0.0": false, "192.168.1.1": false, "": false} {
		if got := LoopbackHost(h); got != want {
			t.Errorf("LoopbackHost(%q) = %v", h, got)
		}
	}
}
