package gate

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
)

// modifyResponse checks every upstream response before a byte of it
// reaches the client (see guard.go): error statuses are replaced by a
// gate error, a whole body is read and checked, a stream is released
// line by line through a [guard]; success bodies are metered.
func (g *Gate) modifyResponse(resp *http.Response) error {
	a := resp.Request.Context().Value(admKey{}).(*admission)
	resp.Header.Del("Set-Cookie") // the agent gets no provider session
	check := leakCheck{key: []byte(a.real.Reveal())}
	echo := check.header(resp.Header) || check.header(resp.Trailer)
	sse := strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")
	switch {
	case resp.StatusCode >= 300:
		// A provider API never redirects, and the client would follow a
		// Location by itself, re-sending body and phantom wherever the
		// upstream names (red team rt5): a 3xx is an upstream error.
		g.upstreamError(resp, a, check)
	case echo:
		g.withhold(resp, a, "response header")
	case encoded(resp.Header):
		g.withhold(resp, a, "encoded response body")
	case sse:
		resp.Header.Del("Content-Length") // a withheld stream ends early
		resp.ContentLength = -1
		gd := &guard{rc: resp.Body, resp: resp, check: check, errEv: errorEvent(a.route.Provider, ReasonEcho),
			onLeak: func(what string) { g.leaked(a, what) }}
		resp.Body = &meteredBody{rc: gd, g: g, a: a, m: meter{provider: a.route.Provider, stream: true}}
	default:
		return g.wholeBody(resp, a, check)
	}
	return nil
}

// encoded reports whether the body is in a Content-Encoding other than
// identity. The gate asks for identity, but an upstream may send gzip or
// br anyway: the check would read compressed bytes the client then
// decodes (fetch and the SDKs decode whatever the header names).
func encoded(h http.Header) bool {
	for _, v := range h.Values("Content-Encoding") {
		for c := range strings.SplitSeq(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return true
			}
		}
	}
	return false
}

// wholeBody reads a non-streamed body (bounded by maxLine), checks it —
// as one JSON value and as an SSE stream ([leakCheck.asStream]) — and its
// trailers, and passes it on metered, or withholds it.
func (g *Gate) wholeBody(resp *http.Response, a *admission, check leakCheck) error {
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxLine+1))
	resp.Body.Close()
	switch {
	case err != nil:
		return fmt.Errorf("read upstream body: %w", err) // the proxy's ErrorHandler charges it
	case len(b) > maxLine:
		g.withhold(resp, a, "oversized response body")
	case check.whole(b) || check.asStream(b) || check.header(resp.Trailer):
		g.withhold(resp, a, "response body")
	default:
		resp.Body = &meteredBody{rc: io.NopCloser(bytes.NewReader(b)), g: g, a: a, m: meter{provider: a.route.Provider}}
	}
	return nil
}

// leaked records the security event of a withheld response and marks the
// exchange, which is then charged its full reservation.
func (g *Gate) leaked(a *admission, what string) {
	a.withheld.Store(true)
	g.refused.add(ReasonEcho)
	e := g.eventOf(a, event.TypeRefusal, ReasonEcho, what+" carried the real credential or a credential format; withheld from the client")
	e.Code = string(fault.PolicyDenied)
	g.record(e)
}

// withhold replaces a whole response by a gate error (502, reason
// upstream.credential_echo) and settles the exchange at its reservation:
// the provider may have billed the generation.
func (g *Gate) withhold(resp *http.Response, a *admission, what string) {
	g.leaked(a, what)
	g.settle(a, a.reserved, OutcomeWithheld)
	a.done()
	replace(resp, http.StatusBadGateway, http.Header{}, gateErrorBody(ReasonEcho, "the provider's answer was withheld"), ReasonEcho)
}

// upstreamError logs a redacted copy of an upstream error body and sends
// the client a gate error with the same status instead (502 for a
// redirect): a provider 401 can echo the key it was given. The provider bills nothing for an error. A
// body or kept header carrying the credential is also a security event
// (reason upstream.credential_echo, then the client's reason too).
func (g *Gate) upstreamError(resp *http.Response, a *admission, check leakCheck) {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	detail := fmt.Sprintf("upstream status %d: %s", resp.StatusCode, g.scrub(string(raw), a))
	g.record(g.eventOf(a, event.TypeDecision, ReasonUpstream, detail))
	keep := http.Header{}
	for _, h := range []string{"Retry-After", "Anthropic-Ratelimit-Requests-Reset", "X-Ratelimit-Reset-Requests"} {
		if v := resp.Header.Get(h); v != "" && printable(v) {
			keep.Set(h, v)
		}
	}
	reason := ReasonUpstream
	if check.whole(raw) || check.header(resp.Header) || check.header(resp.Trailer) {
		g.leaked(a, fmt.Sprintf("upstream HTTP %d", resp.StatusCode))
		reason, keep = ReasonEcho, http.Header{}
	}
	g.settle(a, Amount{}, OutcomeUpstream)
	a.done()
	msg := fmt.Sprintf("provider returned HTTP %d (details in the coagent8 security log)", resp.StatusCode)
	code := resp.StatusCode
	if code < 400 {
		code = http.StatusBadGateway // a redirect: never one the client follows
	}
	replace(resp, code, keep, gateErrorBody(reason, msg), reason)
}

// replace makes resp a gate error: status, the kept headers, body, and
// no trailers.
func replace(resp *http.Response, status int, keep http.Header, body, reason string) {
	keep.Set("Content-Type", "application/json")
	keep.Set(ReasonHeader, reason)
	keep.Set("Content-Length", strconv.Itoa(len(body)))
	resp.StatusCode, resp.Status = status, ""
	resp.Header, resp.Trailer = keep, nil
	resp.Body = io.NopCloser(strings.NewReader(body))
	resp.ContentLength = int64(len(body))
}

// gateErrorBody is an error body both CLIs read (Anthropic error.type and
// message, OpenAI error.code and message).
func gateErrorBody(reason, msg string) string {
	return `{"type":"error","error":{"type":"upstream_error","code":"` + reason + `","message":"` + msg + `"}}`
}
