package commands

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentfs-go/agentfs/core/vfs"
)

// NetRule allows requests to URLs under Prefix ("https://api.example.com/v1/")
// with one of Methods (none: every method). Headers are set on every
// request the rule allows, at the boundary: the script never sees them and
// cannot override them.
type NetRule struct {
	Prefix  string
	Methods []string
	Headers map[string]string
	// AllowPrivate lets the rule reach loopback, private, link-local and
	// other non-public addresses, which are refused otherwise.
	AllowPrivate bool
}

// Net is the network a command may use: nil means none.
type Net struct {
	Rules []NetRule
	// MaxResponseBytes limits the body of one response (0: no limit).
	MaxResponseBytes int64
	// Timeout limits one transfer (0: none beyond the context).
	Timeout time.Duration
}

// netDenied is a request refused by the network policy.
type netDenied struct{ reason string }

func (e *netDenied) Error() string { return "blocked by sandbox network policy: " + e.reason }

// Match returns the rule that allows method on u, or an error saying why
// none does. Among matching rules the longest prefix wins.
func (n *Net) Match(method string, u *url.URL) (*NetRule, error) {
	if n == nil || len(n.Rules) == 0 {
		return nil, &netDenied{"network access is not allowed"}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, &netDenied{"scheme " + u.Scheme + " is not allowed"}
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return nil, &netDenied{"dot segments in the URL path are not allowed"}
		}
	}
	var best *NetRule
	bestLen := -1
	methodDenied := false
	for i := range n.Rules {
		r := &n.Rules[i]
		if !prefixMatch(r.Prefix, u) {
			continue
		}
		if !methodMatch(r.Methods, method) {
			methodDenied = true
			continue
		}
		if len(r.Prefix) > bestLen {
			best, bestLen = r, len(r.Prefix)
		}
	}
	if best == nil {
		if methodDenied {
			return nil, &netDenied{"method " + method + " is not allowed for " + redactURL(u)}
		}
		return nil, &netDenied{redactURL(u) + " is not allowed"}
	}
	return best, nil
}

func redactURL(u *url.URL) string {
	v := *u
	v.User = nil
	v.RawQuery = ""
	v.Fragment = ""
	return v.String()
}

func methodMatch(methods []string, m string) bool {
	if len(methods) == 0 {
		return true
	}
	for _, x := range methods {
		if x == "*" || strings.EqualFold(x, m) {
			return true
		}
	}
	return false
}

func hostPort(u *url.URL) string {
	h := strings.ToLower(u.Hostname())
	p := u.Port()
	if p == "" {
		if u.Scheme == "https" {
			p = "443"
		} else {
			p = "80"
		}
	}
	return net.JoinHostPort(strings.TrimSuffix(h, "."), p)
}

// prefixMatch compares scheme, host and port exactly and the path as a
// prefix, so that "https://api.example.com" never matches
// "https://api.example.com.evil.test/".
func prefixMatch(prefix string, u *url.URL) bool {
	p, err := url.Parse(prefix)
	if err != nil || p.Host == "" {
		return false
	}
	if !strings.EqualFold(p.Scheme, u.Scheme) || hostPort(p) != hostPort(u) {
		return false
	}
	pp := p.EscapedPath()
	if pp == "" || pp == "/" {
		return true
	}
	up := u.EscapedPath()
	if up == "" {
		up = "/"
	}
	if strings.HasSuffix(pp, "/") {
		return strings.HasPrefix(up, pp)
	}
	return up == pp || strings.HasPrefix(up, pp+"/")
}

// PublicIP reports whether ip is a public unicast address.
func PublicIP(ip net.IP) bool {
	if ip4 := ip.To4(); ip4 != nil {
		ip = ip4
		// 0.0.0.0/8, 100.64.0.0/10 (CGNAT), 192.0.0.0/24, 198.18.0.0/15, 240.0.0.0/4
		switch {
		case ip[0] == 0, ip[0] == 100 && ip[1]&0xc0 == 64, ip[0] == 192 && ip[1] == 0 && ip[2] == 0,
			ip[0] == 198 && (ip[1] == 18 || ip[1] == 19), ip[0] >= 240:
			return false
		}
	} else if len(ip) == net.IPv6len {
		// NAT64 and 6to4 embed IPv4 addresses; refuse them too.
		if (ip[0] == 0x20 && ip[1] == 0x02) || (ip[0] == 0x00 && ip[1] == 0x64 && ip[2] == 0xff && ip[3] == 0x9b) {
			return false
		}
	}
	return !(ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified())
}

// dialer checks the resolved address of every connection, so that DNS
// names pointing at private addresses (rebinding included) are refused.
func dialer(allowPrivate bool) *net.Dialer {
	return &net.Dialer{
		Timeout: 30 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return &netDenied{"bad address " + address}
			}
			ip := net.ParseIP(host)
			if ip == nil {
				return &netDenied{"bad address " + address}
			}
			if !allowPrivate && !PublicIP(ip) {
				return &netDenied{"address " + ip.String() + " is private, loopback or link-local"}
			}
			return nil
		},
	}
}

// Transport is the HTTP transport of one request the rule allowed: no
// proxy, no kept connection, and a dialer that refuses private addresses
// unless the rule allows them. curl and node's fetch both use it.
func (r *NetRule) Transport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer(r.AllowPrivate).DialContext,
		DisableKeepAlives:     true,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   30 * time.Second,
		ResponseHeaderTimeout: 0,
		ForceAttemptHTTP2:     true,
	}
}

type curlOpts struct {
	silent, showErr, fail, follow, include, head, get bool
	method, output, writeOut, user                    string
	headers                                           []string
	data                                              []string
	hasData                                           bool
	maxTime                                           time.Duration
	urls                                              []string
}

func init() {
	register("curl", "curl [-sSfLiIG] [-X METHOD] [-H HEADER] [-d DATA] [-o FILE] [-w FORMAT] [-u USER:PASS] [--max-time S] URL", runCurl)
}

type curlExit struct {
	code int
	msg  string
}

func (e *curlExit) Error() string { return e.msg }

func parseCurl(c *Cmd) (*curlOpts, error) {
	o := &curlOpts{}
	args := c.Args[1:]
	bad := func(msg string) error { return &curlExit{2, msg} }
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func(name string) (string, error) {
			if i+1 >= len(args) {
				return "", bad("option " + name + ": requires parameter")
			}
			i++
			return args[i], nil
		}
		if strings.HasPrefix(a, "--") && len(a) > 2 {
			name, val, hasVal := strings.Cut(a, "=")
			get := func() (string, error) {
				if hasVal {
					return val, nil
				}
				return next(name)
			}
			var err error
			var v string
			switch name {
			case "--silent":
				o.silent = true
			case "--show-error":
				o.showErr = true
			case "--fail":
				o.fail = true
			case "--location":
				o.follow = true
			case "--include":
				o.include = true
			case "--head":
				o.head = true
			case "--get":
				o.get = true
			case "--compressed", "--no-progress-meter", "--progress-bar", "--no-buffer", "--http1.1", "--globoff":
			case "--insecure":
				return nil, bad("option --insecure: is not supported in the sandbox")
			case "--request":
				o.method, err = get()
			case "--output":
				o.output, err = get()
			case "--write-out":
				o.writeOut, err = get()
			case "--user":
				o.user, err = get()
			case "--header":
				v, err = get()
				o.headers = append(o.headers, v)
			case "--user-agent":
				v, err = get()
				o.headers = append(o.headers, "User-Agent: "+v)
			case "--data", "--data-ascii", "--data-binary", "--data-raw", "--data-urlencode", "--json":
				v, err = get()
				if err == nil {
					v, err = curlData(c, name, v)
				}
				o.data = append(o.data, v)
				o.hasData = true
				if name == "--json" {
					o.headers = append([]string{"Content-Type: application/json", "Accept: application/json"}, o.headers...)
				}
			case "--max-time", "--connect-timeout":
				v, err = get()
				if err == nil {
					f, perr := strconv.ParseFloat(v, 64)
					if perr != nil || f < 0 {
						return nil, bad("option " + name + ": expected a proper numerical parameter")
					}
					if name == "--max-time" {
						o.maxTime = time.Duration(f * float64(time.Second))
					}
				}
			case "--url":
				v, err = get()
				o.urls = append(o.urls, v)
			case "--max-redirs":
				_, err = get()
			default:
				return nil, bad("option " + name + ": is unknown")
			}
			if err != nil {
				return nil, err
			}
			continue
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			for j := 1; j < len(a); j++ {
				ch := a[j]
				takes := strings.IndexByte("XHdoOwumA", ch) >= 0
				var v string
				if takes {
					if j+1 < len(a) {
						v = a[j+1:]
					} else {
						var err error
						if v, err = next("-" + string(ch)); err != nil {
							return nil, err
						}
					}
				}
				switch ch {
				case 's':
					o.silent = true
				case 'S':
					o.showErr = true
				case 'f':
					o.fail = true
				case 'L':
					o.follow = true
				case 'i':
					o.include = true
				case 'I':
					o.head = true
				case 'G':
					o.get = true
				case 'k':
					return nil, bad("option -k: is not supported in the sandbox")
				case 'v':
					// Verbose output would show the injected headers: refused.
					return nil, bad("option -v: is not supported in the sandbox")
				case 'X':
					o.method = v
				case 'H':
					o.headers = append(o.headers, v)
				case 'A':
					o.headers = append(o.headers, "User-Agent: "+v)
				case 'd':
					d, err := curlData(c, "--data", v)
					if err != nil {
						return nil, err
					}
					o.data = append(o.data, d)
					o.hasData = true
				case 'o':
					o.output = v
				case 'O':
					return nil, bad("option -O: is not supported; use -o FILE")
				case 'w':
					o.writeOut = v
				case 'u':
					o.user = v
				case 'm':
					f, err := strconv.ParseFloat(v, 64)
					if err != nil || f < 0 {
						return nil, bad("option -m: expected a proper numerical parameter")
					}
					o.maxTime = time.Duration(f * float64(time.Second))
				default:
					return nil, bad("option -" + string(ch) + ": is unknown")
				}
				if takes {
					break
				}
			}
			continue
		}
		o.urls = append(o.urls, a)
	}
	if len(o.urls) == 0 {
		return nil, bad("no URL specified")
	}
	if len(o.urls) > 1 {
		return nil, bad("only one URL per call is supported in the sandbox")
	}
	return o, nil
}

// curlData resolves @file (from the agent filesystem) and the per-option
// transformations.
func curlData(c *Cmd, opt, v string) (string, error) {
	if opt == "--data-raw" {
		return v, nil
	}
	if opt == "--data-urlencode" {
		name, val, ok := strings.Cut(v, "=")
		if !ok {
			return url.QueryEscape(v), nil
		}
		return name + "=" + url.QueryEscape(val), nil
	}
	if strings.HasPrefix(v, "@") {
		f := v[1:]
		var data []byte
		var err error
		if f == "-" {
			data, err = c.ReadAllFrom(c.Stdin, 0)
		} else {
			data, err = c.FS.ReadFile(c.Abs(f))
		}
		if err != nil {
			return "", &curlExit{26, fmt.Sprintf("Failed to open/read local data from file/application: %s: %s", f, ErrText(err))}
		}
		v = string(data)
		if opt == "--data" || opt == "--data-ascii" {
			v = strings.NewReplacer("\r", "", "\n", "").Replace(v)
		}
	}
	return v, nil
}

func runCurl(c *Cmd) int {
	o, err := parseCurl(c)
	report := func(code int, msg string) int {
		if o == nil || !o.silent || o.showErr {
			fmt.Fprintf(c.Stderr, "curl: (%d) %s\n", code, msg)
		}
		return code
	}
	if err != nil {
		var ce *curlExit
		if errors.As(err, &ce) {
			if ce.code == 2 {
				fmt.Fprintf(c.Stderr, "curl: %s\n", ce.msg)
				return 2
			}
			return report(ce.code, ce.msg)
		}
		return report(2, err.Error())
	}
	raw := o.urls[0]
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return report(3, "URL rejected: Malformed input to a URL function")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return report(1, "Protocol \""+u.Scheme+"\" not supported")
	}
	method := "GET"
	var body string
	if o.hasData {
		joined := strings.Join(o.data, "&")
		if o.get {
			if u.RawQuery != "" {
				u.RawQuery += "&" + joined
			} else {
				u.RawQuery = joined
			}
		} else {
			method = "POST"
			body = joined
		}
	}
	if o.head {
		method = "HEAD"
	}
	if o.method != "" {
		method = o.method
	}
	hdr := http.Header{}
	for _, h := range o.headers {
		k, v, ok := strings.Cut(h, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			continue
		}
		v = strings.TrimSpace(v)
		if v == "" {
			hdr.Del(k)
			continue
		}
		hdr.Add(k, v)
	}
	if o.hasData && !o.get && hdr.Get("Content-Type") == "" {
		hdr.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if hdr.Get("User-Agent") == "" {
		hdr.Set("User-Agent", "curl/8.5.0 (agentfs sandbox)")
	}
	if hdr.Get("Accept") == "" {
		hdr.Set("Accept", "*/*")
	}
	if o.user != "" {
		hdr.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(o.user)))
	}
	if u.User != nil {
		if hdr.Get("Authorization") == "" {
			pw, _ := u.User.Password()
			hdr.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw)))
		}
		u.User = nil
	}

	ctx := c.Ctx
	var cancel context.CancelFunc = func() {}
	timeout := o.maxTime
	if c.Net != nil && c.Net.Timeout > 0 && (timeout == 0 || c.Net.Timeout < timeout) {
		timeout = c.Net.Timeout
	}
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()

	var resp *http.Response
	origHost := hostPort(u)
	for hops := 0; ; hops++ {
		if hops > 20 {
			return report(47, "Maximum (20) redirects followed")
		}
		rule, err := c.Net.Match(method, u)
		if err != nil {
			return report(7, err.Error())
		}
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
		if err != nil {
			return report(3, "URL rejected: "+err.Error())
		}
		for k, vs := range hdr {
			if hops > 0 && hostPort(u) != origHost && (k == "Authorization" || k == "Cookie") {
				continue
			}
			req.Header[k] = append([]string(nil), vs...)
		}
		// Injected headers last: the script cannot override them.
		for k, v := range rule.Headers {
			req.Header.Del(k)
			if strings.EqualFold(k, "Host") {
				req.Host = v
				continue
			}
			req.Header.Set(k, v)
		}
		tr := rule.Transport()
		client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err = client.Do(req)
		if err != nil {
			tr.CloseIdleConnections()
			return report(curlErrCode(ctx, err), curlErrText(ctx, err, timeout, u))
		}
		if !o.follow || resp.StatusCode < 300 || resp.StatusCode > 399 || resp.Header.Get("Location") == "" {
			defer tr.CloseIdleConnections()
			break
		}
		loc, err := u.Parse(resp.Header.Get("Location"))
		resp.Body.Close()
		tr.CloseIdleConnections()
		if err != nil {
			return report(3, "URL rejected: bad redirect location")
		}
		if o.include {
			writeHead(c.Stdout, resp)
		}
		switch resp.StatusCode {
		case 301, 302, 303:
			if resp.StatusCode == 303 || method == "POST" {
				if method != "HEAD" {
					method = "GET"
				}
				body = ""
				hdr.Del("Content-Type")
			}
		}
		if o.method != "" && resp.StatusCode != 303 {
			method = o.method
		}
		u = loc
	}
	defer resp.Body.Close()

	if o.fail && resp.StatusCode >= 400 {
		return report(22, fmt.Sprintf("The requested URL returned error: %d", resp.StatusCode))
	}
	var max int64
	if c.Net != nil {
		max = c.Net.MaxResponseBytes
	}
	var bodyBuf bytes.Buffer
	if method != "HEAD" {
		r := io.Reader(resp.Body)
		if max > 0 {
			r = io.LimitReader(resp.Body, max+1)
		}
		if _, err := io.Copy(&bodyBuf, r); err != nil {
			return report(curlErrCode(ctx, err), curlErrText(ctx, err, timeout, u))
		}
		if max > 0 && int64(bodyBuf.Len()) > max {
			return report(63, fmt.Sprintf("Maximum file size exceeded (response larger than the sandbox limit of %d bytes)", max))
		}
	}
	var out bytes.Buffer
	if o.include || o.head {
		writeHead(&out, resp)
	}
	out.Write(bodyBuf.Bytes())
	if dev, ok := OpenDevice(c.Abs(o.output), c.Stdin, c.Stdout, c.Stderr); ok && o.output != "" {
		if _, err := dev.Write(out.Bytes()); err != nil {
			return report(23, "Failure writing output to destination")
		}
	} else if o.output != "" && o.output != "-" {
		if err := c.FS.WriteFile(c.Abs(o.output), out.Bytes(), vfs.WriteOptions{}); err != nil {
			return report(23, "Failure writing output to destination: "+o.output+": "+ErrText(err))
		}
	} else if _, err := c.Stdout.Write(out.Bytes()); err != nil {
		return report(23, "Failure writing output to destination")
	}
	if o.writeOut != "" {
		io.WriteString(c.Stdout, writeOutFormat(o.writeOut, resp, u, bodyBuf.Len()))
	}
	return 0
}

func writeHead(w io.Writer, resp *http.Response) {
	fmt.Fprintf(w, "%s %s\r\n", resp.Proto, resp.Status)
	resp.Header.Write(w)
	io.WriteString(w, "\r\n")
}

func writeOutFormat(f string, resp *http.Response, u *url.URL, size int) string {
	var b strings.Builder
	for i := 0; i < len(f); i++ {
		ch := f[i]
		switch {
		case ch == '\\' && i+1 < len(f):
			i++
			switch f[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				b.WriteByte('\\')
				b.WriteByte(f[i])
			}
		case ch == '%' && strings.HasPrefix(f[i:], "%{"):
			end := strings.IndexByte(f[i:], '}')
			if end < 0 {
				b.WriteString(f[i:])
				return b.String()
			}
			name := f[i+2 : i+end]
			i += end
			switch name {
			case "http_code", "response_code":
				fmt.Fprintf(&b, "%03d", resp.StatusCode)
			case "url_effective":
				b.WriteString(redactURL(u))
			case "content_type":
				b.WriteString(resp.Header.Get("Content-Type"))
			case "size_download":
				fmt.Fprint(&b, size)
			case "redirect_url":
				if l := resp.Header.Get("Location"); l != "" {
					if lu, err := u.Parse(l); err == nil {
						b.WriteString(lu.String())
					}
				}
			case "http_version":
				fmt.Fprintf(&b, "%d", resp.ProtoMajor)
				if resp.ProtoMinor != 0 || resp.ProtoMajor == 1 {
					fmt.Fprintf(&b, ".%d", resp.ProtoMinor)
				}
			}
		case ch == '%' && strings.HasPrefix(f[i:], "%%"):
			b.WriteByte('%')
			i++
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

func curlErrCode(ctx context.Context, err error) int {
	var nd *netDenied
	if errors.As(err, &nd) {
		return 7
	}
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return 28
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return 6
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return 28
	}
	if strings.Contains(err.Error(), "tls:") || strings.Contains(err.Error(), "x509:") {
		return 60
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return 7
	}
	return 56
}

func curlErrText(ctx context.Context, err error, timeout time.Duration, u *url.URL) string {
	var nd *netDenied
	if errors.As(err, &nd) {
		return nd.Error()
	}
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("Operation timed out after %d milliseconds", timeout.Milliseconds())
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return "Could not resolve host: " + u.Hostname()
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		_, port, _ := net.SplitHostPort(hostPort(u))
		msg := oe.Err.Error()
		if errors.Is(err, syscall.ECONNREFUSED) {
			msg = "Connection refused"
		}
		return "Failed to connect to " + u.Hostname() + " port " + port + ": " + msg
	}
	return "Recv failure: " + err.Error()
}
