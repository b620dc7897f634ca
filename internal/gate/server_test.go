package gate

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/event"
)

// serveWatched serves f's gate the way every gate listener is served
// (Gate.Server and Gate.Serve) on a loopback port and returns its
// address.
func serveWatched(t *testing.T, f *fixture) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := f.gate.Server(f.gate)
	done := make(chan struct{})
	go func() { defer close(done); _ = f.gate.Serve(srv, ln) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return ln.Addr().String()
}

// rawExchange writes req on a new connection and reads one response.
func rawExchange(t *testing.T, addr, req string) *http.Response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no response to %q: %v", req[:min(len(req), 60)], err)
	}
	resp.Body.Close()
	return resp
}

// TestMalformedRequestsRefusedWithReason: requests net/http answers
// itself, before any handler, were refused without the gate's reason
// header, count or event (red team rt5; issue 18, bad input: "refused
// before any byte leaves, with a reason in X-Coagent8-Gate-Reason,
// counted and recorded"). "OPTIONS *" was answered 200 by net/http.
func TestMalformedRequestsRefusedWithReason(t *testing.T) {
	const post = "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: k\r\nContent-Type: application/json\r\n"
	tests := []struct {
		name, req  string
		wantStatus int
		wantReason string
	}{
		{"two Content-Length values", post + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}", 400, ReasonMalformed},
		{"space before the colon", post + "Content-Length : 2\r\n\r\n{}", 400, ReasonMalformed},
		{"NUL in a value", post + "X-A: a\x00b\r\nContent-Length: 2\r\n\r\n{}", 400, ReasonMalformed},
		{"no Host", "POST /v1/messages HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}", 400, ReasonMalformed},
		{"two Hosts", post + "Host: 127.0.0.2\r\nContent-Length: 2\r\n\r\n{}", 400, ReasonMalformed},
		{"unknown transfer coding", post + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501, ReasonMalformed},
		{"bad request line", "POST\r\n\r\n", 400, ReasonMalformed},
		{"header block above net/http's limit", post + "X-Big: " + strings.Repeat("a", 1<<20+8192) + "\r\n\r\n", 431, ReasonHeaderSize},
		{"OPTIONS *", "OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 404, ReasonRoute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			addr := serveWatched(t, f)
			resp := rawExchange(t, addr, tt.req)
			got := resp.Header.Get(ReasonHeader)
			if resp.StatusCode != tt.wantStatus || got != tt.wantReason {
				t.Errorf("got %d %q, want %d %q", resp.StatusCode, got, tt.wantStatus, tt.wantReason)
			}
			if n := f.gate.Refusals()[tt.wantReason]; n != 1 {
				t.Errorf("refusals[%s] = %d, want 1", tt.wantReason, n)
			}
			var refusals int
			for _, e := range f.events.Events() {
				if e.Type == event.TypeRefusal && e.Reason == tt.wantReason {
					refusals++
				}
			}
			if refusals != 1 {
				t.Errorf("%d refusal events %s, want 1: %+v", refusals, tt.wantReason, f.events.Events())
			}
			if n := len(f.anth.Requests()); n != 0 {
				t.Errorf("the upstream saw %d requests, want none", n)
			}
		})
	}
}

// TestHandlerAnswerNotTakenForNetHTTPs: a refusal the gate's handler
// writes (sorted headers, a Date) is not mistaken for net/http's own, so
// it is neither counted twice nor given a second reason header.
func TestHandlerAnswerNotTakenForNetHTTPs(t *testing.T) {
	f := newFixture(t, nil)
	addr := serveWatched(t, f)
	resp := rawExchange(t, addr, "GET /v1/nothing HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
	if got := resp.Header.Values(ReasonHeader); len(got) != 1 || got[0] != ReasonRoute {
		t.Errorf("reason headers %q, want [%s]", got, ReasonRoute)
	}
	if got := f.gate.Refusals(); got[ReasonMalformed] != 0 || got[ReasonRoute] != 1 {
		t.Errorf("refusals %v, want one %s and no %s", got, ReasonRoute, ReasonMalformed)
	}
}

func TestNetHTTPRefusal(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"HTTP/1.1 400 Bad Request" + netHTTPErrorHeaders + "400 Bad Request", "400 Bad Request", true},
		{"HTTP/1.1 400 Bad Request: missing required Host header" + netHTTPErrorHeaders + "x", "400 Bad Request: missing required Host header", true},
		{"HTTP/1.1 200 OK" + netHTTPErrorHeaders, "", false},
		{"HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nDate: x\r\n\r\n", "", false},
		{"HTTP/1.1 400 A\r\nX: y" + netHTTPErrorHeaders, "", false},
		{"data: HTTP/1.1 400 Bad Request" + netHTTPErrorHeaders, "", false},
		{"HTTP/1.1 4", "", false},
	}
	for _, tt := range tests {
		got, ok := netHTTPRefusal([]byte(tt.in))
		if string(got) != tt.want || ok != tt.ok {
			t.Errorf("netHTTPRefusal(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestMalformedRefusalsPerChannel: net/http's own refusals on a job's
// channel (a listener served the job's ForJob handler, as a delegate
// job's sandbox is) are charged to that job's allowance of free events.
// They all shared the anonymous one: a job sending malformed requests
// through its own channel left another job's out of the log.
func TestMalformedRefusalsPerChannel(t *testing.T) {
	f := newFixture(t, nil)
	channel := func(job string) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := f.gate.Server(f.gate.ForJob(job))
		done := make(chan struct{})
		go func() { defer close(done); _ = f.gate.Serve(srv, ln) }()
		t.Cleanup(func() { srv.Close(); <-done })
		return ln.Addr().String()
	}
	const bad = "POST\r\n\r\n"
	flood, own := channel("job-2"), channel("job-1")
	for range eventBurst + 5 {
		rawExchange(t, flood, bad)
	}
	before := len(f.events.Events())
	rawExchange(t, own, bad)
	var got []string
	for _, e := range f.events.Events()[before:] {
		got = append(got, e.Reason)
	}
	if len(got) != 1 || got[0] != ReasonMalformed {
		t.Errorf("events of job-1's malformed request after job-2's flood: %v, want [%s]", got, ReasonMalformed)
	}
}
