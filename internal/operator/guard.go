package operator

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/netip"

	"github.com/coagent8/coagent8/internal/fault"
)

// guard is the one request chain every route sits behind. Its
// fields are fixed when the server starts listening.
type guard struct {
	host   string // exactly "127.0.0.1:PORT" or "[::1]:PORT"
	origin string // "http://" + host
	csrf   string
	auth   *authenticator
	rec    *recorder
}

func newGuard(ap netip.AddrPort, csrf string, auth *authenticator, rec *recorder) *guard {
	return &guard{host: ap.String(), origin: "http://" + ap.String(), csrf: csrf, auth: auth, rec: rec}
}

// wrap returns next behind the chain: security headers, loopback peer,
// exact Host, no proxy headers, method, credential, and for POST the
// same-origin Origin and the CSRF token. Each refusal is a security event.
func (g *guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w.Header())
		status, code, reason := g.admit(w, r)
		if reason == "" {
			next.ServeHTTP(w, r)
			return
		}
		g.rec.refusal(string(code), reason, r.Method, bounded(r.URL.Path, 200))
		if status != 0 { // 0: admit already answered (the auth challenge)
			refuse(w, status, reason)
		}
	})
}

// admit runs the checks in order and returns the first refusal.
func (g *guard) admit(w http.ResponseWriter, r *http.Request) (int, fault.Code, string) {
	switch {
	case !loopbackPeer(r.RemoteAddr):
		return http.StatusForbidden, fault.PolicyDenied, "operator.peer_not_loopback"
	case r.Host != g.host:
		return http.StatusMisdirectedRequest, fault.PolicyDenied, "operator.host_mismatch"
	case proxied(r.Header):
		return http.StatusForbidden, fault.PolicyDenied, "operator.proxied"
	case r.Method != http.MethodGet && r.Method != http.MethodHead && r.Method != http.MethodPost:
		w.Header().Set("Allow", "GET, HEAD, POST")
		return http.StatusMethodNotAllowed, fault.InvalidInput, "operator.method"
	}
	if reason, wait := g.auth.check(r); reason != "" {
		challenge(w, reason, wait)
		return 0, fault.AuthRequired, reason
	}
	if r.Method == http.MethodPost {
		return g.unsafe(w, r)
	}
	return 0, "", ""
}

// unsafe checks a state-changing request: the Origin must be this
// server's own (a foreign one is refused even with a valid token, R-086),
// a Fetch Metadata site other than same-origin is refused, and the CSRF
// token must match.
func (g *guard) unsafe(w http.ResponseWriter, r *http.Request) (int, fault.Code, string) {
	if r.Header.Get("Origin") != g.origin {
		return http.StatusForbidden, fault.PolicyDenied, "operator.origin"
	}
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" {
		return http.StatusForbidden, fault.PolicyDenied, "operator.fetch_site"
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	tok := r.Header.Get("X-CSRF-Token")
	if tok == "" {
		tok = r.PostFormValue("csrf")
	}
	if subtle.ConstantTimeCompare([]byte(tok), []byte(g.csrf)) != 1 {
		return http.StatusForbidden, fault.PolicyDenied, "operator.csrf"
	}
	return 0, "", ""
}

func loopbackPeer(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// refuse answers a refused request with its status and reason and no
// data: the reason in a header and as the whole plain-text body.
func refuse(w http.ResponseWriter, status int, reason string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Coagent8-Reason", reason)
	w.WriteHeader(status)
	w.Write([]byte(reason + "\n"))
}

// bounded cuts s to at most n bytes.
func bounded(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
