package gate

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

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
	pr.Out = pr.Out.WithContext(httptrace.WithClientTrace(a.ctx, a.trace()))
}

// trace notes when the request's first bytes (its headers) were written
// upstream: the attempt is then sent.
func (a *admission) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{WroteHeaders: func() {
		now := time.Now().UnixNano()
		if a.sentAt.CompareAndSwap(0, now) {
			a.gate.sent.add(a.rid, now)
		}
	}}
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
	// Not a byte written (dial, TLS, a refused connection): nothing
	// reached the provider. After the first byte the effect is uncertain
	// and charged in full (issue 18 scope 4).
	outcome, charge := OutcomeLost, a.reserved
	if a.sentAt.Load() == 0 {
		outcome, charge = OutcomeNotSent, Amount{}
	}
	g.record(g.eventOf(a, event.TypeDecision, ReasonUpstream, g.scrub(err.Error(), a)))
	g.settle(a, charge, outcome)
	a.done()
	writeGateError(w, http.StatusBadGateway, ReasonUpstream, refusalMessage(ReasonUpstream, nil))
}

// settle records the charge of an exchange and its settlement event.
func (g *Gate) settle(a *admission, charged Amount, out Outcome) { g.settleWithin(a, charged, out, 0) }

// settleWithin is [Gate.settle] letting the next write transaction
// within carry take the write (see writer.settle); for settlements off
// the client's path.
func (g *Gate) settleWithin(a *admission, charged Amount, out Outcome, carry time.Duration) {
	if a.rid == 0 {
		return
	}
	sent := a.sentAt.Load()
	g.sent.drop(a.rid)
	err := g.ledger.settle(context.Background(), a.rid, a.grant.ID, a.reserved, charged, out, sent, g.opts.Now(), carry)
	detail := fmt.Sprintf("reserved_tokens=%d reserved_nano_usd=%d charged_tokens=%d charged_nano_usd=%d",
		a.reserved.Tokens, a.reserved.Spend, charged.Tokens, charged.Spend)
	if err != nil {
		detail += " ledger_error=" + g.opts.Redactor.String(err.Error())
	}
	e := g.eventOf(a, event.TypeDecision, "settled."+string(out), detail)
	e.Rule = "gate.attempt " + string(attemptOf(out, sent != 0))
	e.IDs["attempt"] = strconv.FormatInt(a.rid, 10)
	if a.decision != "" {
		e.IDs["decision"] = a.decision
	}
	g.record(e)
}
