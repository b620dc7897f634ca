package operator

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Session limits (R-083: the local session badge, issued only after the
// Basic credential). A badge lives 8 hours from issue, whatever the
// activity; at most 64 live badges are kept (a client that drops cookies
// and sends Basic every time would otherwise grow the table), the oldest
// evicted first.
const (
	sessionTTL = 8 * time.Hour
	maxBadges  = 64
)

// badges issues and checks the session cookie. The cookie is HttpOnly
// (no script reads it), SameSite=Strict (no cross-site request carries
// it), Path=/, with Max-Age; Secure only on a TLS connection, which this
// loopback-only plain-HTTP server never has (a Secure cookie set over
// http would not be kept). Cookies are not isolated by port: the
// cookie's name carries the port, and the server keeps, per badge, the
// origin it was issued for; but a browser sends the cookie to every
// server on the host, so the badge is never a credential by itself (the
// guard requires Basic on every request). Only a
// digest of each badge is kept in memory; badges do not survive a
// restart. Safe for concurrent use.
type badges struct {
	name, origin string
	now          func() time.Time

	mu   sync.Mutex
	live map[[32]byte]badge
}

type badge struct {
	origin  string
	expires time.Time
}

func newBadges(origin string, port uint16, now func() time.Time) *badges {
	return &badges{name: "coagent8_operator_" + strconv.Itoa(int(port)), origin: origin, now: now, live: map[[32]byte]badge{}}
}

// valid reports whether r carries a live badge issued for this origin.
func (b *badges) valid(r *http.Request) bool {
	c, err := r.Cookie(b.name)
	if err != nil {
		return false
	}
	k := sha256.Sum256([]byte(c.Value))
	b.mu.Lock()
	defer b.mu.Unlock()
	bg, ok := b.live[k]
	if ok && !b.now().Before(bg.expires) {
		delete(b.live, k)
		return false
	}
	return ok && bg.origin == b.origin
}

// issue sets a new badge on w (after the Basic credential was verified).
func (b *badges) issue(w http.ResponseWriter, r *http.Request) {
	raw := make([]byte, 32)
	rand.Read(raw)
	v := base64.RawURLEncoding.EncodeToString(raw)
	now := b.now()
	b.mu.Lock()
	b.evict(now)
	b.live[sha256.Sum256([]byte(v))] = badge{origin: b.origin, expires: now.Add(sessionTTL)}
	b.mu.Unlock()
	http.SetCookie(w, b.cookie(r, v, int(sessionTTL/time.Second)))
}

// evict drops expired badges, then the oldest while the table is full.
func (b *badges) evict(now time.Time) {
	for k, bg := range b.live {
		if !now.Before(bg.expires) {
			delete(b.live, k)
		}
	}
	for len(b.live) >= maxBadges {
		var oldest [32]byte
		var at time.Time
		for k, bg := range b.live {
			if at.IsZero() || bg.expires.Before(at) {
				oldest, at = k, bg.expires
			}
		}
		delete(b.live, oldest)
	}
}

// end forgets r's badge and tells the browser to drop the cookie.
func (b *badges) end(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(b.name); err == nil {
		b.mu.Lock()
		delete(b.live, sha256.Sum256([]byte(c.Value)))
		b.mu.Unlock()
	}
	http.SetCookie(w, b.cookie(r, "", -1))
}

func (b *badges) cookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: b.name, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil}
}

// postLogout is POST /logout: the session badge is forgotten and the
// cookie dropped. A browser that cached the Basic credential sends it
// again on its next request and gets a new badge: the credential, not
// the badge, is what authenticates; closing the browser forgets it.
func (s *Server) postLogout(w http.ResponseWriter, r *http.Request) {
	s.badges.end(w, r)
	s.show(w, r, "result", http.StatusOK, page{Notice: "Logged out: the session ended. Close the browser to forget the credential it cached."})
}
