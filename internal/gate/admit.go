package gate

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/secret"
	"github.com/coagent8/coagent8/internal/store"
)

// admission is one admitted request on its way upstream.
type admission struct {
	gate     *Gate
	route    Route
	grant    Grant // immutable binding
	wire     wire  // the headers that go upstream, and the dropped names
	body     []byte
	parsed   body         // body's reading (bind), so a filtered body is compared without a second parse
	rid      int64        // reservation (= attempt) id; 0 on unmetered routes
	decision string       // the egress decision's EvidenceDigest@1 ("" without a joint decider)
	sentAt   atomic.Int64 // Unix ns when the request headers were written upstream; 0 = not sent
	reserved Amount
	epoch    uint64 // the gate's cut count before the reservation ([Gate.cutEpoch])
	real     secret.Value
	ctx      context.Context // detached from the client; cut by flight.cancel
	flight   *flight
	done     context.CancelFunc
	// withheld is set when the response was withheld (guard.go).
	withheld atomic.Bool
	// egressRecorded is set when the egress decider refused and recorded
	// the refusal's event itself: the gate adds no second one (issue 19
	// item 14).
	egressRecorded bool
	// egressLimited is set when the decider counted its refusal but left
	// its record out (its allowance spent): a refusal that raises a
	// containment signal is then recorded by the gate ([Gate.deny]).
	egressLimited bool
	// served is closed when the handler has returned, so the client has
	// the whole response; settlement waits for it (see meteredBody.finish).
	served chan struct{}
}

type admKey struct{}

// ServeHTTP admits or denies r and forwards admitted requests.
func (g *Gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isHello(r) {
		g.recordLimited(g.limitKey(r, nil), event.Event{Type: event.TypeDecision, Reason: ReasonHello, Rule: "route"})
		w.WriteHeader(http.StatusOK)
		return
	}
	a, reason, detail := g.admitWithin(w, r)
	if reason != "" {
		g.deny(w, r, a, reason, detail)
		return
	}
	g.record(g.eventOf(a, event.TypeDecision, ReasonAdmitted, "")) // the egress decision's event names the headers
	r = r.WithContext(context.WithValue(r.Context(), admKey{}, a))
	defer close(a.served)
	hf := &headerFlush{ResponseWriter: w}
	defer hf.stop()
	g.proxies[a.route.Provider].ServeHTTP(hf, r)
}

// admitWithin runs admit with the connection's read deadline at
// BodyTimeout. An admitted request has its whole body read, and the
// deadline is lifted: net/http's background read, which watches for the
// client going away while the answer streams, would otherwise hit it and
// cancel the exchange. A refused request keeps it, because net/http then
// discards the unread body before it answers, and that read must not
// wait forever either. A writer without deadlines (ErrNotSupported) is
// admitted without one; the job's time limit still bounds it.
func (g *Gate) admitWithin(w http.ResponseWriter, r *http.Request) (*admission, string, string) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(g.opts.BodyTimeout)) // the wall clock, not opts.Now: the kernel keeps it
	a, reason, detail := g.admit(r)
	if reason == "" {
		_ = rc.SetReadDeadline(time.Time{})
	}
	return a, reason, detail
}

// admit runs the admission order of notes/gate.md §1. On denial a carries
// what was learned so far (for the event) and reason is set.
func (g *Gate) admit(r *http.Request) (a *admission, reason, detail string) {
	a = &admission{gate: g}
	if isUpgrade(r) {
		return a, ReasonUpgrade, ""
	}
	rt, reason := matchRoute(r)
	if reason != "" {
		return a, reason, r.Method + " " + safePath(r.URL.Path)
	}
	a.route = rt
	if !queryAllowed(r.URL, rt) {
		return a, ReasonQuery, ""
	}
	if a.wire, reason = checkHeaders(r, rt); reason != "" {
		return a, reason, ""
	}
	if kind, _ := g.CredentialKind(rt.Provider); kind == OAuthToken {
		a.wire.credentialIn("Authorization") // decided where it is sent
	}
	if a.grant, reason, detail = g.authenticate(r); reason != "" {
		return a, reason, detail
	}
	if reason, detail = g.bind(r, a); reason != "" {
		return a, reason, detail
	}
	a.epoch = g.cutEpoch() // before the reservation reads the grant's state
	if reason = g.decideAndReserve(r, a); reason != "" {
		return a, reason, ""
	}
	return a, g.resolve(a), ""
}

// authenticate maps the presented phantom credential to its grant.
func (g *Gate) authenticate(r *http.Request) (Grant, string, string) {
	cred, ok := credentialOf(r.Header.Get("X-Api-Key"), r.Header.Get("Authorization"))
	switch {
	case !ok:
		return Grant{}, ReasonAmbiguous, ""
	case cred == "":
		return Grant{}, ReasonNoCredential, ""
	case !strings.HasPrefix(cred, PhantomPrefix) && looksLikeProviderKey(cred):
		// Never echo or compare it: the event only says what it looked like.
		return Grant{}, ReasonRealKey, "a provider API key was presented instead of a phantom credential"
	}
	b, err := g.binding(r.Context(), g.opts.Key.digest(cred))
	if errors.Is(err, ErrNoGrant) {
		return Grant{}, ReasonUnknownGrant, ""
	}
	if err != nil {
		return Grant{}, ReasonUnavailable, ""
	}
	return b, "", ""
}

// bind checks provider, job and the model named in the body.
func (g *Gate) bind(r *http.Request, a *admission) (string, string) {
	if a.grant.Provider != a.route.Provider {
		return ReasonProvider, "grant is for " + string(a.grant.Provider)
	}
	if g.otherJob(r, a.grant.Job) {
		return ReasonJob, ""
	}
	if r.Method != http.MethodPost {
		if r.ContentLength != 0 {
			return ReasonBody, "a bodiless route was sent a body"
		}
		return "", ""
	}
	b, err := readBody(r)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return ReasonBodyTimeout, "request body not received within " + g.opts.BodyTimeout.String()
	}
	if err != nil {
		return ReasonBody, "request body unreadable or above the size cap"
	}
	req, err := parseBody(b)
	if err != nil {
		return ReasonBody, err.Error()
	}
	if req.Model != a.grant.Model {
		return ReasonModel, "request names another model than the grant"
	}
	if reason, detail := reachesBeyond(a.route.Provider, req, b); reason != "" {
		return reason, detail
	}
	a.body, a.parsed = b, req
	a.reserved = reservation(len(b), req.outputLimit(a.route.Provider, a.grant.Ceiling), a.grant.Price)
	return "", ""
}

// reservation is the worst case of a request: every body byte an input
// token at the dearest input rate, plus the output limit — at the
// long-context tier's rates when the body could exceed its threshold.
func reservation(bodyLen int, output int64, p Price) Amount {
	in := int64(bodyLen)
	p = p.worst(in)
	rate := max(p.InputPerMTok, p.CacheWritePerMTok, p.CacheReadPerMTok)
	return Amount{Tokens: sum(in, output), Spend: NanoUSD(sum(int64(cost(in, rate)), int64(cost(output, p.OutputPerMTok))))}
}

// reserve claims the budget (metered routes) or re-checks liveness, each
// in its own transaction: the path of a decider that does not join the
// gate's transaction, and of bodiless requests. Either way the attempt
// gets its row (issue 18 scope 4).
func (g *Gate) reserve(ctx context.Context, a *admission) string {
	var reason string
	err := g.ledger.w.write(ctx, func(tx store.Tx) error {
		if reason = g.reserveIn(ctx, tx, a); reason != "" {
			return errRefused
		}
		return nil
	})
	switch {
	case reason != "":
		a.rid = 0 // rolled back
		return reason
	case err != nil:
		a.rid = 0
		return ReasonUnavailable // fail closed when the budget store fails
	}
	return ""
}

// reserveIn claims the budget of a metered route, or checks that the
// grant is live for an unmetered one, and books the attempt row, inside
// tx (the joint admission transaction, or reserve's own).
func (g *Gate) reserveIn(ctx context.Context, tx store.Tx, a *admission) string {
	now, tag := g.opts.Now(), attemptTag{decision: a.decision, route: a.route.Method + " " + a.route.Path}
	if !a.route.Metered {
		if reason := g.checkLive(ctx, tx, a); reason != "" {
			return reason
		}
		if !g.unmetered.take(a.grant.ID, unmeteredAllowance(a.grant.Limits.Requests)) {
			return ReasonBudgetUnmetered
		}
		rid, err := g.ledger.book(ctx, tx, a.grant.ID, Amount{}, now, tag)
		if err != nil {
			return ReasonUnavailable
		}
		a.rid = rid
		return ""
	}
	rid, reason, err := g.ledger.reserveTx(ctx, tx, a.grant.ID, a.reserved, now, tag)
	if err != nil {
		return ReasonUnavailable
	}
	a.rid = rid
	return reason
}

// checkLive admits an unmetered request of a live, unexpired grant, read
// inside tx; nothing is reserved.
func (g *Gate) checkLive(ctx context.Context, tx store.Tx, a *admission) string {
	now := g.opts.Now()
	a.reserved = Amount{}
	live, err := g.ledger.stillLive(ctx, tx, a.grant.ID, now)
	if err != nil {
		return ReasonUnavailable
	}
	if !live {
		reason, _ := g.ledger.whyNot(ctx, tx, a.grant.ID, Amount{}, now)
		return reason
	}
	return ""
}

// resolve fetches the real credential, last, and starts the
// flight. Only the reference declared for the grant's provider resolves
// a grant whose stored reference is another (the configuration
// changed since) is refused secret.undeclared.
func (g *Gate) resolve(a *admission) string {
	ref, ok := g.opts.Credentials[a.grant.Provider]
	if !ok || ref.String() != a.grant.SecretRef {
		g.settle(a, Amount{}, OutcomeNotSent)
		return ReasonUndeclared
	}
	var v secret.Value
	err := errNoResolver
	if g.opts.Secrets != nil {
		v, err = g.opts.Secrets.Resolve(ref)
	}
	if err != nil {
		g.settle(a, Amount{}, OutcomeNotSent)
		return ReasonSecret
	}
	a.real = v
	if g.startFlight(a) {
		if reason := g.endedMeanwhile(a); reason != "" {
			a.done()
			g.settle(a, Amount{}, OutcomeNotSent)
			return reason
		}
	}
	return ""
}

// endedMeanwhile re-reads a's grant after this gate cut some grant between
// a's reservation and its flight's registration: that cut could not reach
// a, so a revoked, settled or expired grant refuses here, before any byte
// leaves. A cut after the registration cancels the flight itself.
func (g *Gate) endedMeanwhile(a *admission) string {
	ctx, now := context.Background(), g.opts.Now()
	live, err := g.ledger.stillLive(ctx, nil, a.grant.ID, now)
	switch {
	case err != nil:
		return ReasonUnavailable // fail closed
	case live:
		return ""
	}
	reason, _ := g.ledger.whyNot(ctx, nil, a.grant.ID, Amount{}, now)
	return reason
}

var errNoResolver = errors.New("no secret resolver")

// startFlight gives the exchange a context detached from the client (so a
// disconnect does not abort the upstream read the settlement needs) but cut
// by revocation, grant expiry and MaxStream. It reports whether this gate
// cut a grant since a's reservation ([Gate.addFlight]).
func (g *Gate) startFlight(a *admission) (cutSince bool) {
	base := context.WithoutCancel(context.Background())
	ctx, cancel := context.WithCancelCause(base)
	deadline := g.opts.Now().Add(g.opts.MaxStream)
	if ex := a.grant.Expires; ex.Before(deadline) {
		deadline = ex
	}
	ctx, stop := context.WithDeadlineCause(ctx, deadline, errors.Join(errCut, errors.New("grant expired")))
	a.ctx = context.WithValue(ctx, admKey{}, a)
	a.flight = &flight{grant: a.grant.ID, cancel: cancel}
	a.served = make(chan struct{})
	a.done = func() { stop(); cancel(nil); g.dropFlight(a.flight) }
	return g.addFlight(a.flight, a.epoch)
}

// deny answers a refused request and records the decision.
func (g *Gate) deny(w http.ResponseWriter, r *http.Request, a *admission, reason, detail string) {
	if detail == "" && a.wire.forward != nil {
		detail = g.transmission(r, a).HeaderRecord() // what would have been forwarded and dropped
	}
	e := g.eventOf(a, event.TypeRefusal, reason, detail)
	e.Code = string(fault.PolicyDenied)
	g.refused.add(reason)
	if a.grant.ID != "" {
		g.refusedGrant(a.grant.ID, reason)
	}
	key := g.limitKey(r, a) // before signalOf attributes a route probe to its grant
	s := g.signalOf(r, a, reason)
	first := s != "" && g.firstSignal(a.grant.Job)
	switch {
	case a.egressRecorded && !(s != "" && a.egressLimited): // the egress decider logged this refusal itself
	case s != "":
		// The refusal is the only record of what the contained request
		// was (its route, the headers it would have sent): a client that
		// spent its free allowance first must not keep it out of the log.
		// Nor one that spent the decider's: its first containment refusal
		// and their allowance go to any egress.category refusal, also
		// those that contain nothing (a policy label, a body whose strings
		// it cannot decode), so a refusal it only counted is recorded here.
		g.recordSignal(a.grant.Job, first, e)
	default:
		g.recordLimited(key, e)
	}
	if s != "" {
		g.contain(a, s, first)
	}
	writeGateError(w, status(reason), reason, refusalMessage(reason, a))
}

func (g *Gate) eventOf(a *admission, t event.Type, reason, detail string) event.Event {
	e := event.Event{Type: t, Reason: reason, Detail: detail, Backend: string(a.route.Provider),
		Rule: "gate.route " + a.route.Method + " " + a.route.Path}
	if a.grant.ID != "" {
		e.Model = a.grant.Model
		e.IDs = map[string]string{"grant": a.grant.ID, "job": a.grant.Job}
	}
	return e
}

// safePath bounds a path for an event (it is never a credential carrier:
// query strings are not logged).
func safePath(p string) string {
	if len(p) > 128 {
		return p[:128] + "…"
	}
	return p
}
