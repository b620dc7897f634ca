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
	badges *badges
	rec    *recorder
}

func newGuard(ap netip.AddrPort, csrf string, auth *authenticator, b *badges, rec *recorder) *guard {
	return &guard{host: ap.String(), origin: "http://" + ap.String(), csrf: csrf, auth: auth, badges: b, rec: rec}
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
	if status, code, reason := g.authenticate(w, r); reason != "" {
		return status, code, reason
	}
	if r.Method == http.MethodPost {
		return g.unsafe(w, r)
	}
	return 0, "", ""
}

// authenticate accepts the Basic credential, which earns a session badge
// when the request had none. The badge alone never authenticates:
// cookies are not isolated by port, so the browser sends it to every
// server on this host it visits — any local process's, and loopback is
// not authentication — while it keeps the Basic credential per origin
// and sends it only here. A wrong credential is refused whatever badge
// accompanies it.
func (g *guard) authenticate(w http.ResponseWriter, r *http.Request) (int, fault.Code, string) {
	if reason, wait := g.auth.check(r); reason != "" {
		challenge(w, reason, wait)
		return 0, fault.AuthRequired, reason
	}
	if !g.badges.valid(r) {
		g.badges.issue(w, r)
	}
	return 0, "", ""
}

// unsafe checks a state-changing request: the Origin must be this
// server's own (a foreign one is refused even with a valid token, R-086),
// a Fetch Metadata site other than same-origin is refused, and the CSRF
// token must match.
func (g *guard) unsafe(w http.ResponseWriter, r *http.Request) (int, fault.Code, string) {
	if o := r.Header.Get("Origin"); o != g.origin && !ownFormPost(r, o) {
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

// ownFormPost reports whether a request with Origin o is a plain HTML
// form submitted from one of this server's own pages without script: the
// pages' Referrer-Policy no-referrer makes a browser send "Origin: null"
// on such a navigation (Fetch, "serializing a request origin"), so the
// real origin is unavailable. It is accepted only with the browser's own
// Fetch Metadata saying a same-origin document navigation
// (Sec-Fetch-Site same-origin, Sec-Fetch-Mode navigate) — headers no
// page can set — and still needs the CSRF token. A foreign Origin is never
// accepted; no page of this server can be framed (frame-ancestors 'none',
// X-Frame-Options DENY), so a sandboxed same-origin frame cannot be the
// source either.
func ownFormPost(r *http.Request, o string) bool {
	return o == "null" && r.Header.Get("Sec-Fetch-Site") == "same-origin" && r.Header.Get("Sec-Fetch-Mode") == "navigate"
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
