package operator

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// badgeOf returns the session cookie a response set, or nil.
func badgeOf(ts *testServer, h http.Header) *http.Cookie {
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if c.Name == "coagent8_operator_"+strconv.Itoa(int(ts.ap.Port())) {
			return c
		}
	}
	return nil
}

// TestSessionBadge: the Basic credential earns a session cookie
// that is HttpOnly, SameSite=Strict, Path=/, expiring, not Secure over
// plain HTTP, named for the port; the cookie alone never authenticates
// (browsers send it to every port of the host:
// TestOperatorBrowserBadgeNotBearerAcrossPorts); a wrong Basic credential
// beside it is refused; logout ends it.
func TestSessionBadge(t *testing.T) {
	ts := start(t, Options{})
	other := start(t, Options{})
	r := ts.do(t, req{path: "/", auth: true})
	c := badgeOf(ts, r.header)
	if r.status != http.StatusOK || c == nil {
		t.Fatalf("login: status %d, no badge in %q", r.status, r.header.Values("Set-Cookie"))
	}
	type attrs struct {
		HttpOnly, Secure bool
		SameSite         http.SameSite
		Path             string
		MaxAge           int
	}
	want := attrs{HttpOnly: true, SameSite: http.SameSiteStrictMode, Path: "/", MaxAge: 8 * 3600}
	if d := cmp.Diff(want, attrs{c.HttpOnly, c.Secure, c.SameSite, c.Path, c.MaxAge}); d != "" {
		t.Errorf("cookie attributes (-want +got):\n%s", d)
	}
	cookie := map[string]string{"Cookie": c.Name + "=" + c.Value}
	again := ts.do(t, req{path: "/jobs", header: cookie, auth: true})
	if again.status != http.StatusOK || badgeOf(ts, again.header) != nil {
		t.Errorf("Basic beside the badge: status %d, new badge %v", again.status, badgeOf(ts, again.header) != nil)
	}
	alone := ts.do(t, req{path: "/jobs", header: cookie})
	// The same cookie name and value sent to another dashboard (another
	// port on the same host, where browsers also send it) is not a badge.
	foreign := other.do(t, req{path: "/", header: map[string]string{"Cookie": "coagent8_operator_" +
		strconv.Itoa(int(other.ap.Port())) + "=" + c.Value}})
	wrong := ts.do(t, req{path: "/", header: map[string]string{"Cookie": cookie["Cookie"], "Authorization": "Basic " + "b3BlcmF0b3I6d3Jvbmc="}})
	forged := ts.do(t, req{path: "/", header: map[string]string{"Cookie": c.Name + "=AAAA" + c.Value[4:]}})
	got := []int{alone.status, foreign.status, wrong.status, forged.status}
	if d := cmp.Diff([]int{401, 401, 401, 401}, got); d != "" {
		t.Errorf("badge alone, foreign origin, wrong Basic beside the badge, forged badge (-want +got):\n%s", d)
	}

	out := ts.do(t, req{method: http.MethodPost, path: "/logout", body: "csrf=" + ts.csrf, auth: true,
		header: map[string]string{"Origin": ts.url, "Cookie": cookie["Cookie"]}})
	gone := badgeOf(ts, out.header)
	if out.status != http.StatusOK || gone == nil || gone.MaxAge >= 0 || !strings.Contains(out.body, "Logged out") {
		t.Fatalf("logout: status %d, cookie %+v", out.status, gone)
	}
	if after := ts.do(t, req{path: "/", header: cookie, auth: true}); after.status != http.StatusOK || badgeOf(ts, after.header) == nil {
		t.Errorf("Basic beside the ended badge: status %d, new badge %v; want 200 and a new badge", after.status, badgeOf(ts, after.header) != nil)
	}
}

// TestFormPostWithoutScript: a plain HTML form post from the dashboard's
// own page (Origin null under Referrer-Policy no-referrer, the browser's
// same-origin navigate Fetch Metadata) passes with the token; an opaque
// origin from anywhere else, or without the token, is refused.
func TestFormPostWithoutScript(t *testing.T) {
	ts := start(t, Options{})
	nav := func(site, mode, body string) req {
		return req{method: http.MethodPost, path: "/logout", auth: true, body: body,
			header: map[string]string{"Origin": "null", "Sec-Fetch-Site": site, "Sec-Fetch-Mode": mode}}
	}
	tok := "csrf=" + ts.csrf
	for _, tc := range []struct {
		name   string
		r      req
		status int
		reason string
	}{
		{"own form, no script", nav("same-origin", "navigate", tok), 200, ""},
		{"cross-site opaque origin", nav("cross-site", "navigate", tok), 403, "operator.origin"},
		{"no fetch metadata", nav("", "", tok), 403, "operator.origin"},
		{"same-origin fetch, opaque origin", nav("same-origin", "cors", tok), 403, "operator.origin"},
		{"own form without token", nav("same-origin", "navigate", "x=1"), 403, "operator.csrf"},
	} {
		got := ts.do(t, tc.r)
		if got.status != tc.status || got.header.Get("X-Coagent8-Reason") != tc.reason {
			t.Errorf("%s: status %d reason %q, want %d %q", tc.name, got.status, got.header.Get("X-Coagent8-Reason"), tc.status, tc.reason)
		}
	}
}
