package operator

import (
	"context"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/event"
)

// testServer is a dashboard serving on 127.0.0.1 with a temporary state
// directory, its credential and an in-memory copy of its security events.
type testServer struct {
	*Server
	url    string // "http://127.0.0.1:PORT"
	host   string // "127.0.0.1:PORT"
	ap     netip.AddrPort
	dir    string
	cred   Credential
	events *event.Memory
}

// start serves a dashboard until the test ends. opts may preset fields;
// StateDir, Credential and Events are filled in when empty.
func start(t testing.TB, opts Options) *testServer {
	t.Helper()
	if opts.StateDir == "" {
		opts.StateDir = t.TempDir()
	}
	cred, _, err := LoadOrCreateCredential(opts.StateDir)
	if err != nil {
		t.Fatal(err)
	}
	mem := &event.Memory{}
	opts.Credential = cred
	if opts.Events == nil {
		opts.Events = mem
	}
	if opts.Poll == 0 {
		opts.Poll = 50 * time.Millisecond
	}
	s, err := New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		s.Close()
	})
	ap := netip.MustParseAddrPort(ln.Addr().String())
	return &testServer{Server: s, url: "http://" + ap.String(), host: ap.String(), ap: ap, dir: opts.StateDir, cred: cred, events: mem}
}

// req is one test request; auth adds the right credential.
type req struct {
	method, path, body string
	auth               bool
	header             map[string]string
	host               string // "" = the right one
}

type resp struct {
	status int
	header http.Header
	body   string
}

func (ts *testServer) do(t testing.TB, r req) resp {
	t.Helper()
	if r.method == "" {
		r.method = http.MethodGet
	}
	hr, err := http.NewRequest(r.method, ts.url+r.path, strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	if r.host != "" {
		hr.Host = r.host
	}
	if r.auth {
		hr.SetBasicAuth(User, ts.cred.Password().Reveal())
	}
	if r.body != "" {
		hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	res, err := http.DefaultTransport.RoundTrip(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{res.StatusCode, res.Header, string(b)}
}

// post is a same-origin POST carrying the CSRF token, as the page's
// script sends it.
func (ts *testServer) post(path string) req {
	return req{method: http.MethodPost, path: path, auth: true, body: "csrf=" + ts.csrf,
		header: map[string]string{"Origin": ts.url}}
}

// refusals returns the reasons of the recorded refusal events.
func (ts *testServer) refusals() []string {
	var out []string
	for _, e := range ts.events.Events() {
		if e.Type == event.TypeRefusal {
			out = append(out, e.Reason)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// noCORS fails when any response header grants cross-origin access.
func noCORS(t testing.TB, h http.Header) {
	t.Helper()
	for k := range h {
		if strings.HasPrefix(strings.ToLower(k), "access-control-") {
			t.Errorf("response carries %s: %q", k, h.Get(k))
		}
	}
}
