// Package httpguard holds the checks every HTTP door of the engine
// (serve http, serve mcp --http) applies before a request reaches an
// agent:
//
//   - the bearer token, compared in constant time, when one is set;
//   - without a token the listener is on loopback (the CLI refuses
//     anything else), and then only requests addressed to a loopback
//     name are served: a web page that rebinds its own DNS name to
//     127.0.0.1 (DNS rebinding) sends its name in Host and is refused;
//   - always, requests a browser marks as cross-origin (Sec-Fetch-Site,
//     Origin) that could change state are refused, so a page the user
//     visits cannot drive a local server.
package httpguard

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// Options of Wrap.
type Options struct {
	// Token, when set, is required as "Authorization: Bearer TOKEN" on
	// every request but those to Public paths.
	Token string
	// Public paths are served without the token (health checks).
	Public []string
	// Reject writes a refusal; nil writes the message as plain text. The
	// status is 401 (no or wrong token) or 403 (Host or origin refused).
	Reject func(w http.ResponseWriter, r *http.Request, status int, msg string)
}

// Wrap returns next behind the checks of the package comment.
func Wrap(next http.Handler, o Options) http.Handler {
	reject := o.Reject
	if reject == nil {
		reject = func(w http.ResponseWriter, _ *http.Request, status int, msg string) { http.Error(w, msg, status) }
	}
	want := []byte("Bearer " + o.Token)
	checked := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, p := range o.Public {
			if r.URL.Path == p {
				next.ServeHTTP(w, r)
				return
			}
		}
		if o.Token == "" {
			if !LoopbackHost(r.Host) {
				reject(w, r, http.StatusForbidden, fmt.Sprintf(
					"Host %q is not a loopback name: a server without a token answers only requests to 127.0.0.1, [::1] or localhost (protection against DNS rebinding); set a token to serve other names", r.Host))
				return
			}
		} else if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			reject(w, r, http.StatusUnauthorized, "missing or wrong bearer token (Authorization: Bearer TOKEN)")
			return
		}
		next.ServeHTTP(w, r)
	})
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reject(w, r, http.StatusForbidden, "cross-origin request from a browser refused: a web page may not call this server")
	}))
	return cop.Handler(checked)
}

// LoopbackHost reports whether a Host header (name or address, with or
// without a port) names this machine's loopback interface.
func LoopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// LoopbackAddr reports whether a listener's address is on loopback.
func LoopbackAddr(a net.Addr) bool {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.IsLoopback()
	}
	return LoopbackHost(a.String())
}
