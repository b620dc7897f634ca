package operator

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestOperatorBrowserBadgeNotBearerAcrossPorts: cookies are not isolated
// by port, so a browser that logged in to the dashboard sends its session
// badge to any other server on 127.0.0.1 it visits — a local process's web
// server, which loopback does not authenticate (seed 001). Replayed
// against the dashboard without the Basic credential (which the browser
// keeps per origin and never sends to that server), the badge is refused:
// reading a page would hand over the CSRF token, and with it every action.
func TestOperatorBrowserBadgeNotBearerAcrossPorts(t *testing.T) {
	ts := start(t, Options{})
	var mu sync.Mutex
	var seen []string
	thief := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Cookie"), r.Header.Get("Authorization"))
		mu.Unlock()
		w.Write([]byte("<!doctype html><title>other server</title>hello"))
	}))
	defer thief.Close()

	ctx := browser(t, ts, ts.cred.Password().Reveal())
	do(t, ctx, "log in", chromedp.Navigate(ts.url+"/"))
	waitTrue(t, ctx, "dashboard shown", `!!document.querySelector('meta[name="csrf"]')`)
	do(t, ctx, "visit another loopback server", chromedp.Navigate(thief.URL+"/"))

	mu.Lock()
	got := append([]string(nil), seen...)
	mu.Unlock()
	if len(got) < 2 {
		t.Fatalf("the other server saw no request")
	}
	if got[1] != "" {
		t.Fatalf("the browser sent the dashboard's Basic credential to another port")
	}
	cookie := got[0]
	sent := &http.Request{Header: http.Header{"Cookie": {cookie}}}
	if _, err := sent.Cookie(ts.badges.name); err != nil {
		t.Fatalf("the other server got cookies %q, not the dashboard's badge: the premise of this test changed", cookie)
	}
	for _, path := range []string{"/", "/candidates", "/events"} {
		r := ts.do(t, req{path: path, header: map[string]string{"Cookie": cookie}})
		if got, want := r.status, http.StatusUnauthorized; got != want {
			t.Errorf("badge replayed by another port's server, GET %s: status %d, want %d", path, got, want)
		}
	}
}
