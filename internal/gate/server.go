package gate

import (
	"bytes"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
)

// ReasonMalformed is the refusal of a request net/http itself answered
// before the gate's handler ran: duplicate Content-Length values, a
// space before a header's colon, a NUL in a value, a missing or repeated
// Host, a transfer coding it does not implement, a request line it cannot
// parse. No byte of such a request leaves; the reason says why there was
// no decision.
const ReasonMalformed = "request.malformed"

// Server returns the HTTP server a gate listener is served with; h is
// the gate or a handler in front of it. General OPTIONS handling is off,
// so "OPTIONS *" reaches the gate's route check instead of being answered
// 200 by net/http (red team rt5). Serve it with [Gate.Serve].
func (g *Gate) Server(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, DisableGeneralOptionsHandler: true}
}

// Serve is srv.Serve(ln) with ln's connections watched for the answers
// net/http writes itself, before any handler, to a request it cannot
// read (issue 18, bad input: "refused …, with a reason in
// X-Coagent8-Gate-Reason, counted and recorded"). Each such answer gets
// the X-Coagent8-Gate-Reason header ([ReasonMalformed], or
// [ReasonHeaderSize] for 431), is counted with the gate's refusals and
// recorded as a refusal event naming net/http's status line. It returns
// srv.Serve's error.
func (g *Gate) Serve(srv *http.Server, ln net.Listener) error {
	job := g.opts.Job
	if h, ok := srv.Handler.(forJob); ok {
		job = h.job // a job's channel: its refusals are charged to the job
	}
	return srv.Serve(&watchedListener{Listener: ln, g: g, job: job})
}

type watchedListener struct {
	net.Listener
	g   *Gate
	job string // the allowance of free events refusals are charged to ([Gate.limitKey])
}

func (l *watchedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &watchedConn{Conn: c, g: l.g, job: l.job}, nil
}

// watchedConn recognises net/http's own refusal (server.go, conn.serve):
// one Write of "HTTP/1.1 <status>" followed directly by errorHeaders.
// A handler's answer never looks so: net/http writes its headers in
// sorted order with a Date, so Connection would precede Content-Type.
type watchedConn struct {
	net.Conn
	g    *Gate
	job  string
	once sync.Once
}

// netHTTPErrorHeaders are the headers net/http's own refusals carry,
// exactly (net/http server.go, errorHeaders).
const netHTTPErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

func (c *watchedConn) Write(p []byte) (int, error) {
	line, ok := netHTTPRefusal(p)
	if !ok {
		return c.Conn.Write(p)
	}
	reason := ReasonMalformed
	if bytes.HasPrefix(line, []byte("431 ")) {
		reason = ReasonHeaderSize
	}
	c.once.Do(func() { c.g.refuseMalformed(c.job, reason, string(line)) })
	// The reason goes in as the first header; the caller is told that
	// all of p was written, as it was, with the header added.
	out := make([]byte, 0, len(p)+64)
	out = append(out, "HTTP/1.1 "...)
	out = append(out, line...)
	out = append(out, "\r\n"+ReasonHeader+": "+reason...)
	out = append(out, p[len("HTTP/1.1 ")+len(line):]...)
	if _, err := c.Conn.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// netHTTPRefusal reports whether p is one of net/http's own refusals and
// returns its status line after "HTTP/1.1 " ("400 Bad Request: missing
// required Host header").
func netHTTPRefusal(p []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(p, []byte("HTTP/1.1 "))
	if !ok {
		return nil, false
	}
	i := bytes.Index(rest, []byte(netHTTPErrorHeaders))
	if i < 3 || bytes.IndexByte(rest[:i], '\n') >= 0 {
		return nil, false
	}
	if code, err := strconv.Atoi(string(rest[:3])); err != nil || code < 400 || code > 599 {
		return nil, false
	}
	return rest[:i], true
}

// refuseMalformed counts and records a request net/http refused itself
// on job's channel ("" = none).
func (g *Gate) refuseMalformed(job, reason, line string) {
	g.refused.add(reason)
	e := event.Event{Type: event.TypeRefusal, Reason: reason, Code: string(fault.PolicyDenied),
		Rule: "gate.http", Detail: "net/http answered " + safePath(line)}
	g.recordLimited(job, e) // before any handler: the channel is all that is known
}
