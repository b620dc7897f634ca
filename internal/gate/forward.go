package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/coagent8/coagent8/internal/event"
)

func (g *Gate) newProxies(origins map[Provider]*url.URL) map[Provider]*httputil.ReverseProxy {
	out := map[Provider]*httputil.ReverseProxy{}
	for p, origin := range origins {
		out[p] = &httputil.ReverseProxy{
			Rewrite:        func(pr *httputil.ProxyRequest) { rewrite(pr, origin) },
			ModifyResponse: g.modifyResponse,
			ErrorHandler:   g.upstreamFailed,
			FlushInterval:  -1, // SSE: every chunk goes out as it arrives
			Transport:      g.opts.Transport,
			ErrorLog:       discardLog,
			BufferPool:     copyBuffers{},
		}
	}
	return out
}

// copyBuffers recycles the proxy's 32 KiB copy buffers: without a pool
// each request allocated one (the largest allocation of a request).
type copyBuffers struct{}

var copyBufferPool = sync.Pool{New: func() any { return new([32 << 10]byte) }}

func (copyBuffers) Get() []byte  { return copyBufferPool.Get().(*[32 << 10]byte)[:] }
func (copyBuffers) Put(b []byte) { copyBufferPool.Put((*[32 << 10]byte)(b)) }

// rewrite builds the upstream request: fixed origin, the admitted path and
// the query as sent, a header set built from the route's allowlist (every
// other client header — credentials, cookies, forwarding metadata, session
// ids, anything an agent adds — is dropped; issue 18 scope 1), the real
// credential, the exact body bytes that were decided, and the detached
// flight context. Nothing about the decision is added (seed 001 "Decision
// identity").
func rewrite(pr *httputil.ProxyRequest, origin *url.URL) {
	a := pr.In.Context().Value(admKey{}).(*admission)
	pr.SetURL(origin)
	pr.Out.Host = ""
	pr.Out.Header = a.wire.header(a.real.Reveal(), a.route.Provider)
	pr.Out.Trailer = nil
	pr.Out.Body, pr.Out.ContentLength, pr.Out.GetBody = nil, 0, nil
	if a.body != nil {
		pr.Out.Body = io.NopCloser(bytes.NewReader(a.body))
		pr.Out.ContentLength = int64(len(a.body))
		pr.Out.Header.Set("Content-Length", strconv.Itoa(len(a.body)))
	}
	pr.Out = pr.Out.WithContext(a.ctx)
}

// modifyResponse replaces upstream error bodies and meters success bodies.
func (g *Gate) modifyResponse(resp *http.Response) error {
	a := resp.Request.Context().Value(admKey{}).(*admission)
	if resp.StatusCode >= 400 {
		g.upstreamError(resp, a)
		return nil
	}
	resp.Body = &meteredBody{rc: resp.Body, g: g, a: a,
		m: meter{provider: a.route.Provider, stream: strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream")}}
	return nil
}

// upstreamError logs a redacted copy of an upstream error body and sends
// the client a gate error with the same status instead: a provider 401 can
// echo the key it was given. The provider bills nothing for an error.
func (g *Gate) upstreamError(resp *http.Response, a *admission) {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	detail := fmt.Sprintf("upstream status %d: %s", resp.StatusCode, g.scrub(string(raw), a))
	g.record(g.eventOf(a, event.TypeDecision, ReasonUpstream, detail))
	g.settle(a, Amount{}, OutcomeUpstream)
	a.done()
	body := fmt.Sprintf(`{"type":"error","error":{"type":"upstream_error","code":"%s","message":"provider returned HTTP %d (details in the coagent8 security log)"}}`,
		ReasonUpstream, resp.StatusCode)
	keep := http.Header{}
	for _, h := range []string{"Retry-After", "Anthropic-Ratelimit-Requests-Reset", "X-Ratelimit-Reset-Requests"} {
		if v := resp.Header.Get(h); v != "" {
			keep.Set(h, v)
		}
	}
	keep.Set("Content-Type", "application/json")
	keep.Set("X-Coagent8-Gate-Reason", ReasonUpstream)
	resp.Header = keep
	resp.Body = io.NopCloser(strings.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
}

// scrub redacts s for the diagnostic log: the real credential literally,
// then the diagnostic profile, bounded to 2 KiB.
func (g *Gate) scrub(s string, a *admission) string {
	if k := a.real.Reveal(); k != "" {
		s = strings.ReplaceAll(s, k, "[REDACTED:credential]")
	}
	out, _ := g.opts.Redactor.Bound(s, 2048)
	return out
}

// upstreamFailed handles a transport failure. A failed dial reached no one;
// anything later may have reached the provider and is charged in full.
func (g *Gate) upstreamFailed(w http.ResponseWriter, r *http.Request, err error) {
	a := r.Context().Value(admKey{}).(*admission)
	var op *net.OpError
	outcome := OutcomeCut
	if errors.As(err, &op) && op.Op == "dial" {
		outcome = OutcomeNotSent
	}
	charge := a.reserved
	if outcome == OutcomeNotSent {
		charge = Amount{}
	}
	g.record(g.eventOf(a, event.TypeDecision, ReasonUpstream, g.scrub(err.Error(), a)))
	g.settle(a, charge, outcome)
	a.done()
	writeGateError(w, http.StatusBadGateway, ReasonUpstream)
}

// settle records the charge of an exchange and its settlement event.
func (g *Gate) settle(a *admission, charged Amount, out Outcome) {
	if a.rid == 0 {
		return
	}
	err := g.ledger.settle(context.Background(), a.rid, a.grant.ID, a.reserved, charged, out, g.opts.Now())
	detail := fmt.Sprintf("reserved_tokens=%d reserved_nano_usd=%d charged_tokens=%d charged_nano_usd=%d",
		a.reserved.Tokens, a.reserved.Spend, charged.Tokens, charged.Spend)
	if err != nil {
		detail += " ledger_error=" + g.opts.Redactor.String(err.Error())
	}
	g.record(g.eventOf(a, event.TypeDecision, "settled."+string(out), detail))
}
