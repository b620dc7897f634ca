package operator

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/event"
)

func TestOperatorAuthRequired(t *testing.T) {
	ts := start(t, Options{})
	for _, tc := range []struct {
		name   string
		r      req
		reason string
	}{
		{"no credential", req{path: "/"}, "operator.auth_missing"},
		{"wrong password", req{path: "/jobs", header: map[string]string{"Authorization": basic(User, "not-the-password")}}, "operator.auth_invalid"},
		{"wrong user", req{path: "/jobs", header: map[string]string{"Authorization": basic("root", ts.cred.Password().Reveal())}}, "operator.auth_invalid"},
		{"bearer instead of basic", req{path: "/", header: map[string]string{"Authorization": "Bearer " + ts.cred.Password().Reveal()}}, "operator.auth_missing"},
		{"forwarded identity is no credential (R-062)", req{path: "/", header: map[string]string{"X-Forwarded-User": "operator", "X-Remote-User": "operator"}}, "operator.proxied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ts.do(t, tc.r)
			want := http.StatusUnauthorized
			if tc.reason == "operator.proxied" {
				want = http.StatusForbidden
			}
			if got.status != want || got.header.Get("X-Coagent8-Reason") != tc.reason {
				t.Fatalf("status %d reason %q, want %d %q", got.status, got.header.Get("X-Coagent8-Reason"), want, tc.reason)
			}
			if want == http.StatusUnauthorized && !strings.HasPrefix(got.header.Get("WWW-Authenticate"), "Basic ") {
				t.Errorf("WWW-Authenticate = %q", got.header.Get("WWW-Authenticate"))
			}
			if strings.Contains(got.body, "<") || strings.Contains(got.body, ts.cred.Password().Reveal()) {
				t.Errorf("refusal body carries data: %q", got.body)
			}
			if !contains(ts.refusals(), tc.reason) {
				t.Errorf("no security event %q; have %v", tc.reason, ts.refusals())
			}
		})
	}
	if got := ts.do(t, req{path: "/", auth: true}); got.status != http.StatusOK {
		t.Fatalf("right credential: status %d", got.status)
	}
}

func basic(user, pass string) string {
	r, _ := http.NewRequest("GET", "/", nil)
	r.SetBasicAuth(user, pass)
	return r.Header.Get("Authorization")
}

func TestOperatorAuthFailuresRateLimited(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	ts := start(t, Options{Now: func() time.Time { return now }}) // frozen clock: no refill
	wrong := req{path: "/", header: map[string]string{"Authorization": basic(User, "guess")}}
	for i := range authBurst {
		if got := ts.do(t, wrong); got.status != http.StatusUnauthorized {
			t.Fatalf("attempt %d: status %d", i+1, got.status)
		}
	}
	got := ts.do(t, wrong)
	if got.status != http.StatusTooManyRequests || got.header.Get("Retry-After") == "" {
		t.Fatalf("over budget: status %d Retry-After %q", got.status, got.header.Get("Retry-After"))
	}
	// The right credential still passes while the budget is spent: any
	// local process can spend it, and must not lock the operator out (a
	// 256-bit credential is not guessed, however fast the answers come).
	if got := ts.do(t, req{path: "/", auth: true}); got.status != http.StatusOK {
		t.Fatalf("right credential while limited: status %d", got.status)
	}
	if got := ts.do(t, wrong); got.status != http.StatusTooManyRequests {
		t.Fatalf("wrong credential after the right one: status %d", got.status)
	}
	if !contains(ts.refusals(), "operator.auth_rate_limited") {
		t.Errorf("no rate-limit event; have %v", ts.refusals())
	}
	// A missing credential never spends the budget (a foreign page cannot
	// lock the operator out by making the browser fetch).
	if got := ts.do(t, req{path: "/"}); got.status != http.StatusUnauthorized {
		t.Errorf("no credential while limited: status %d", got.status)
	}
}

func TestOperatorHostChecked(t *testing.T) {
	ts := start(t, Options{})
	other := "127.0.0.1:" + map[bool]string{true: "1", false: "2"}[ts.ap.Port() != 1]
	for _, host := range []string{"attacker.example:" + portOf(ts), "attacker.example", other, "localhost:" + portOf(ts),
		"[::1]:" + portOf(ts), "127.0.0.1", "127.0.0.1:" + portOf(ts) + "."} {
		t.Run(host, func(t *testing.T) {
			got := ts.do(t, req{path: "/", auth: true, host: host})
			if got.status != http.StatusMisdirectedRequest || got.header.Get("X-Coagent8-Reason") != "operator.host_mismatch" {
				t.Fatalf("status %d reason %q", got.status, got.header.Get("X-Coagent8-Reason"))
			}
			if got.body != "operator.host_mismatch\n" {
				t.Errorf("body %q carries data", got.body)
			}
		})
	}
	if !contains(ts.refusals(), "operator.host_mismatch") {
		t.Errorf("no security event; have %v", ts.refusals())
	}
}

func portOf(ts *testServer) string { return ts.host[strings.LastIndexByte(ts.host, ':')+1:] }

func TestOperatorUnsafeMethodsNeedOriginAndToken(t *testing.T) {
	ts := start(t, Options{})
	ok := ts.post("/lifecycle/stop")
	cases := []struct {
		name   string
		edit   func(*req)
		reason string
	}{
		{"foreign Origin with a valid token", func(r *req) { r.header["Origin"] = "https://evil.example" }, "operator.origin"},
		{"same name other port", func(r *req) { r.header["Origin"] = "http://127.0.0.1:1" }, "operator.origin"},
		{"null Origin", func(r *req) { r.header["Origin"] = "null" }, "operator.origin"},
		{"no Origin", func(r *req) { delete(r.header, "Origin") }, "operator.origin"},
		{"cross-site fetch metadata", func(r *req) { r.header["Sec-Fetch-Site"] = "cross-site" }, "operator.fetch_site"},
		{"no token", func(r *req) { r.body = "" }, "operator.csrf"},
		{"wrong token", func(r *req) { r.body = "csrf=" + strings.Repeat("A", len(ts.csrf)) }, "operator.csrf"},
		{"wrong header token", func(r *req) { r.body = ""; r.header["X-CSRF-Token"] = "x" }, "operator.csrf"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := ok
			r.header = map[string]string{"Origin": ts.url}
			tc.edit(&r)
			got := ts.do(t, r)
			if got.status != http.StatusForbidden || got.header.Get("X-Coagent8-Reason") != tc.reason {
				t.Fatalf("status %d reason %q, want 403 %q", got.status, got.header.Get("X-Coagent8-Reason"), tc.reason)
			}
			noCORS(t, got.header)
		})
	}
	for _, reason := range []string{"operator.origin", "operator.csrf"} {
		if !contains(ts.refusals(), reason) {
			t.Errorf("no security event %q", reason)
		}
	}
	// Both present and right: the request reaches its handler.
	got := ts.do(t, ok)
	if got.status != http.StatusConflict || !strings.Contains(got.body, "LIFECYCLE_UNAVAILABLE") {
		t.Fatalf("same-origin POST with token: status %d body %.200q", got.status, got.body)
	}
	got = ts.do(t, req{method: http.MethodPost, path: "/lifecycle/stop", auth: true,
		header: map[string]string{"Origin": ts.url, "X-CSRF-Token": ts.csrf}})
	if got.status != http.StatusConflict {
		t.Fatalf("token in header: status %d", got.status)
	}
}

func TestOperatorNoCORSEver(t *testing.T) {
	ts := start(t, Options{})
	pre := map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "authorization, x-csrf-token"}
	for _, r := range []req{
		{method: http.MethodOptions, path: "/", header: pre},
		{method: http.MethodOptions, path: "/lifecycle/stop", auth: true, header: pre},
		{path: "/", auth: true, header: map[string]string{"Origin": "https://evil.example"}},
		{path: "/live", auth: true, header: map[string]string{"Origin": "https://evil.example"}, method: http.MethodHead},
	} {
		got := ts.do(t, r)
		noCORS(t, got.header)
		if r.method == http.MethodOptions && got.status < 400 {
			t.Errorf("OPTIONS %s: status %d, want a refusal", r.path, got.status)
		}
	}
}

func TestOperatorSecurityHeadersOnEveryResponse(t *testing.T) {
	ts := start(t, Options{})
	for _, r := range []req{{path: "/"}, {path: "/", auth: true}, {path: "/nope", auth: true}, {path: "/", host: "x.example"},
		{path: "/assets/app.js", auth: true}} {
		got := ts.do(t, r)
		h := got.header
		if h.Get("Content-Security-Policy") != csp || h.Get("X-Frame-Options") != "DENY" || h.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s (status %d): CSP %q, XFO %q, Referrer-Policy %q", r.path, got.status,
				h.Get("Content-Security-Policy"), h.Get("X-Frame-Options"), h.Get("Referrer-Policy"))
		}
	}
	if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
		t.Errorf("CSP %q is not strict", csp)
	}
}

func TestOperatorProxiedRequestsRefused(t *testing.T) {
	ts := start(t, Options{})
	for _, h := range []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Real-IP", "Via"} {
		got := ts.do(t, req{path: "/", auth: true, header: map[string]string{h: "for=203.0.113.9"}})
		if got.status != http.StatusForbidden || got.header.Get("X-Coagent8-Reason") != "operator.proxied" {
			t.Errorf("%s: status %d reason %q", h, got.status, got.header.Get("X-Coagent8-Reason"))
		}
	}
}

// TestOperatorCredentialNeverEchoed is a canary: no page, header or
// security event carries the credential.
func TestOperatorCredentialNeverEchoed(t *testing.T) {
	ts := start(t, Options{Doctor: demoDoctor})
	pw := ts.cred.Password().Reveal()
	for _, rt := range routeTable {
		method, path := samplePath(rt.pattern)
		if path == "/live" {
			continue // a stream; its first event is checked in live_test.go
		}
		r := req{method: method, path: path, auth: true}
		if method == http.MethodPost {
			r = ts.post(path)
		}
		got := ts.do(t, r)
		for k, v := range got.header {
			if strings.Contains(strings.Join(v, " "), pw) {
				t.Errorf("%s: header %s carries the credential", path, k)
			}
		}
		if strings.Contains(got.body, pw) {
			t.Errorf("%s: body carries the credential", path)
		}
	}
	ts.do(t, req{path: "/", header: map[string]string{"Authorization": basic(User, pw+"x")}})
	for _, e := range ts.events.Events() {
		if strings.Contains(fmt.Sprint(e), pw) {
			t.Errorf("event carries the credential: %+v", e)
		}
	}
}

// TestOperatorServesIPv6Loopback: on [::1] the Host must be exactly
// "[::1]:PORT"; 127.0.0.1 with the same port is another host.
func TestOperatorServesIPv6Loopback(t *testing.T) {
	ln, err := Listen("[::1]:0")
	if err != nil {
		t.Fatalf("listen on [::1] (the test host needs IPv6 loopback): %v", err)
	}
	dir := t.TempDir()
	cred, _, _ := LoadOrCreateCredential(dir)
	s, err := New(t.Context(), Options{StateDir: dir, Credential: cred, Events: &event.Memory{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	port := ln.Addr().(*net.TCPAddr).Port
	for host, want := range map[string]int{fmt.Sprintf("[::1]:%d", port): 200, fmt.Sprintf("127.0.0.1:%d", port): 421} {
		r, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://[::1]:%d/", port), nil)
		r.Host = host
		r.SetBasicAuth(User, cred.Password().Reveal())
		res, err := http.DefaultTransport.RoundTrip(r)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("Host %s: status %d, want %d", host, res.StatusCode, want)
		}
	}
}

// rawDo writes request line and headers (CRLF-joined, as given) on a new
// connection and reads one response: for request targets net/http's
// client never sends.
func rawDo(t *testing.T, ts *testServer, lines ...string) resp {
	t.Helper()
	c, err := net.Dial("tcp", ts.host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(strings.Join(lines, "\r\n") + "\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{res.StatusCode, res.Header, string(b)}
}

// TestOperatorAsteriskOptionsBehindTheChain: "OPTIONS *" (the server-wide
// form) is answered by the chain like every other request, not by
// net/http's built-in 200: refused, with the security headers and a
// security event, whatever the Host.
func TestOperatorAsteriskOptionsBehindTheChain(t *testing.T) {
	ts := start(t, Options{})
	for _, tc := range []struct {
		name, host string
		status     int
		reason     string
	}{
		{"right host", ts.host, http.StatusMethodNotAllowed, "operator.method"},
		{"foreign host", "attacker.example:" + portOf(ts), http.StatusMisdirectedRequest, "operator.host_mismatch"},
	} {
		got := rawDo(t, ts, "OPTIONS * HTTP/1.1", "Host: "+tc.host, "Origin: https://evil.example",
			"Access-Control-Request-Method: POST", "Connection: close")
		if got.status != tc.status || got.header.Get("X-Coagent8-Reason") != tc.reason || got.header.Get("Content-Security-Policy") != csp {
			t.Errorf("%s: status %d reason %q CSP %q, want %d %q and the CSP", tc.name, got.status,
				got.header.Get("X-Coagent8-Reason"), got.header.Get("Content-Security-Policy"), tc.status, tc.reason)
		}
		noCORS(t, got.header)
		if !contains(ts.refusals(), tc.reason) {
			t.Errorf("%s: no security event %q; have %v", tc.name, tc.reason, ts.refusals())
		}
	}
}

// TestOperatorIdleConnectionsClosed: a keep-alive connection waits for
// its next request no longer than for its first one's headers
// (headerTimeout). Without that, any local peer could hold connections
// open for ever after one refused request each (about 20 KiB and a
// goroutine apiece) until the dashboard ran out of memory or descriptors.
func TestOperatorIdleConnectionsClosed(t *testing.T) {
	ts := start(t, Options{})
	for _, tc := range []struct {
		name  string
		first string // the request before the idle wait; "" = none
	}{
		{"after a refused request", "GET / HTTP/1.1\r\nHost: " + ts.host + "\r\n\r\n"},
		{"before any request", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", ts.host)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			br := bufio.NewReader(c)
			if tc.first != "" {
				io.WriteString(c, tc.first)
				res, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, res.Body)
			}
			began := time.Now()
			c.SetReadDeadline(began.Add(headerTimeout + 5*time.Second))
			_, err = br.ReadByte()
			if got, want := err, io.EOF; got != want {
				t.Errorf("idle connection after %v: read error %v, want %v (closed by the server)", time.Since(began).Round(time.Second), got, want)
			}
		})
	}
}
