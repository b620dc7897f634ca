package gate

import (
	"context"
	"crypto/hmac"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/http/httputil"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coagent8/coagent8/internal/allowance"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/secret"
	"github.com/coagent8/coagent8/internal/store"
)

// SecretResolver resolves a grant's credential reference at forward time.
// [secret.Resolver] implements it.
type SecretResolver interface {
	Resolve(secret.Ref) (secret.Value, error)
}

var _ SecretResolver = secret.Resolver{}

// Options configure a [Gate]. DB, Key and Egress are required; everything
// else has a documented default.
type Options struct {
	DB  *store.DB // grants and reservations live here (component "gate")
	Key Key       // phantom hashing key ([LoadKey])

	Prices  Prices         // price catalog; nil = per-grant prices only
	Secrets SecretResolver // nil = resolve nothing (every forward fails closed)
	// Credentials declares, per provider, the one credential reference
	// the gate may resolve for it: the user's config.json
	// gate.credentials.<provider> (issue 18 scope 3, R-101). A grant names
	// that reference or none (then it takes it); [Gate.Grant] refuses any
	// other, and resolution of a reference not declared for the grant's
	// provider is refused (secret.undeclared) with a security event.
	// nil declares nothing: every forward is refused, and grants are
	// inert records.
	Credentials map[Provider]secret.Ref
	Events      event.Sink // nil = event.Discard
	// Redactor is the diagnostic redactor for upstream error bodies and
	// transport errors (nil = redact.NewDiagnostic("")).
	Redactor *redact.Redactor

	// Upstreams overrides a provider's origin ("https://host[:port]"). The
	// defaults are https://api.anthropic.com and https://api.openai.com.
	Upstreams map[Provider]string
	// UnsafeAllowLoopbackUpstream admits http:// origins on a loopback IP.
	// It exists for tests and benchmarks against local provider doubles;
	// in production it would let the gate forward real credentials in
	// clear text, so never set it from user configuration.
	UnsafeAllowLoopbackUpstream bool
	// Job, when set, restricts this gate to grants of that job (the
	// per-job in-process gate).
	Job string
	// Intermediaries names, per provider, the forward proxy the gate
	// sends that provider's requests through (an HTTPS proxy or egress
	// relay the user's organisation requires), as an origin
	// "https://proxy.example:3128" (http:// too: an https upstream is then
	// tunnelled with CONNECT, so the proxy sees only TLS). A provider not
	// named is reached directly. Every egress decision binds the custody
	// route gate → intermediary → origin (issue 18 scope 5, R-131), and the
	// egress policy's recipient requirements apply to the intermediary's
	// facts (egress Config.Intermediaries): unstated facts refuse with
	// egress.unknown_recipient_fact. With intermediaries, Transport must
	// be nil or an *http.Transport (cloned, its Proxy replaced); anything
	// else is refused (gate.intermediary), as it could not be routed.
	Intermediaries map[Provider]string
	// Egress decides every POST body before it is forwarded
	// (internal/egress, issue 10). Required: [New] refuses a nil decider
	// with [ErrNoEgressDecider], so no body ever leaves undecided.
	Egress EgressDecider

	// DrainTimeout is how long the gate keeps reading an upstream stream
	// after its client went away, to settle from the usage report (0 =
	// 2 min). MaxDrains caps concurrent drains (0 = 32); past it an
	// abandoned stream is charged its reservation at once.
	DrainTimeout time.Duration
	MaxDrains    int
	// BodyTimeout bounds how long the gate waits for a request's body
	// (0 = 1 min). A body that stops arriving, declared longer than sent
	// or chunked and never finished, is refused request.body_timeout (408)
	// instead of holding its handler until the client goes away. The
	// servers set only ReadHeaderTimeout, and a whole-request ReadTimeout
	// would also cut long streams, so the gate sets this deadline itself.
	BodyTimeout time.Duration
	// MaxStream bounds one forwarded exchange (0 = 30 min).
	MaxStream time.Duration
	// WatchInterval is how often live streams' grants are re-read from the
	// database, so a revocation by another process cuts them (0 = 200 ms).
	WatchInterval time.Duration
	// CloseGrace is how long [Gate.Close] lets the exchanges in flight end
	// on their own before it cuts them (0 = 10 s).
	CloseGrace time.Duration
	// Transport reaches the upstreams (nil = a dedicated transport without
	// environment proxies).
	Transport http.RoundTripper
	// Now is the clock (nil = time.Now).
	Now func() time.Time
}

// Gate admits, forwards and meters provider requests. It is an
// [http.Handler]; create it with [New] and stop it with [Gate.Close]. Its
// methods are safe for concurrent use.
type Gate struct {
	opts    Options
	events  *allowance.Limiter // refusals and hello probes a client can cause for free
	repeats *allowance.Limiter // containment signals of a job after its first ([Gate.firstSignal])
	signals allowance.Set      // the jobs whose first containment signal was recorded
	ended   allowance.Set      // the jobs whose counts were flushed when their grants ended
	ledger  *ledger
	joint   jointDecider          // nil: the decider cannot share the gate's transaction
	origins map[Provider]string   // checked at New; an egress target's origin
	custody map[Provider][]byte   // custody-route digest per provider
	hops    map[Provider][]string // the intermediaries' origins per provider (nil = direct)
	proxies map[Provider]*httputil.ReverseProxy
	drains  chan struct{}
	stop    context.CancelFunc
	done    chan struct{}  // closed when watch returned
	bg      sync.WaitGroup // background checkpoints
	// settling counts settlements still being written; Close waits for them.
	settling sync.WaitGroup

	refused   refusals
	unmetered unmeteredCounts // unmetered requests per grant ([unmeteredAllowance])
	sent      sentMarks       // attempts sent since the last watcher tick

	mu       sync.Mutex
	bindings map[string]Grant // keyed hash → immutable binding fields only
	flights  map[string]map[*flight]struct{}
	cuts     uint64 // cutGrant and cutAll calls so far ([Gate.cutEpoch])
	// lastRefusal is the reason of the latest request this gate refused
	// per grant id ([Grant.LastRefusal]); at most maxLastRefusals entries.
	lastRefusal map[string]string
}

// maxLastRefusals bounds [Gate]'s lastRefusal: past it the map starts
// anew, so a long-lived gate keeps no entry per grant it ever refused.
const maxLastRefusals = 4096

// New validates opts, migrates the gate's tables and starts the revocation
// watcher. A missing decider is a *fault.Error (INVALID_INPUT, reason
// gate.egress_missing) wrapping [ErrNoEgressDecider].
func New(ctx context.Context, opts Options) (*Gate, error) {
	if opts.DB == nil || len(opts.Key.k) != 32 {
		return nil, fault.New(fault.InvalidInput, "gate.options", "gate needs a database and a 32-byte key")
	}
	if opts.Egress == nil {
		return nil, fault.Wrap(fault.InvalidInput, "gate.egress_missing",
			"gate needs an egress decider: no request body is forwarded without an egress decision", ErrNoEgressDecider)
	}
	opts = withDefaults(opts)
	if err := checkCredentials(opts.Credentials); err != nil {
		return nil, err
	}
	opts.Credentials = maps.Clone(opts.Credentials)
	opts = withKinds(opts) // JSON-field references; each value checked against its kind
	origins, err := origins(opts)
	if err != nil {
		return nil, err
	}
	hops, err := routeIntermediaries(&opts, origins)
	if err != nil {
		return nil, err
	}
	events, err := newEventLimiter(opts.Now)
	if err != nil {
		return nil, err
	}
	repeats, err := newEventLimiter(opts.Now)
	if err != nil {
		return nil, err
	}
	l, err := openLedger(ctx, opts.DB)
	if err != nil {
		return nil, err
	}
	g := &Gate{opts: opts, events: events, repeats: repeats, ledger: l, drains: make(chan struct{}, opts.MaxDrains), done: make(chan struct{}),
		bindings: map[string]Grant{}, flights: map[string]map[*flight]struct{}{}, lastRefusal: map[string]string{}}
	g.proxies = g.newProxies(origins)
	g.origins, g.custody, g.hops = map[Provider]string{}, map[Provider][]byte{}, hops
	for p, u := range origins {
		g.origins[p] = u.String()
		g.custody[p] = custodyRoute(hops[p], u.String())
	}
	if j, ok := opts.Egress.(jointDecider); ok && j.Joins(opts.DB.SQL()) {
		g.joint = j
	}
	wctx, stop := context.WithCancel(context.Background())
	g.stop = stop
	go g.watch(wctx)
	g.bg.Go(func() { l.w.checkpoints(wctx) })
	return g, nil
}

func withDefaults(o Options) Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.DrainTimeout, 2*time.Minute)
	def(&o.CloseGrace, 10*time.Second)
	def(&o.MaxStream, 30*time.Minute)
	def(&o.BodyTimeout, time.Minute)
	def(&o.WatchInterval, 200*time.Millisecond)
	if o.MaxDrains <= 0 {
		o.MaxDrains = 32
	}
	if o.Events == nil {
		o.Events = event.Discard{}
	}
	if o.Redactor == nil {
		o.Redactor = redact.NewDiagnostic("")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Transport == nil {
		o.Transport = newTransport()
	}
	return o
}

// Close stops the watcher and the background checkpoints, lets the
// exchanges still in flight (a stream, or a drain reading to the usage
// report after its client left) end on their own for a grace
// (Options.CloseGrace), cuts those still running, waits for every
// settlement, and returns the writer connection to the pool. A cut exchange is settled as any cut:
// uncertain, charged its full reservation unless the usage arrived.
// Before, Close did not wait for exchanges: one still in flight settled
// later through the pool, or never when the process exited first (red
// team 2026-12-02: `gate serve` stopping mid-stream left its attempt
// "sent"). The caller stops serving first.
func (g *Gate) Close() error {
	g.stop()
	<-g.done
	g.bg.Wait()
	if !g.waitFlights(g.opts.CloseGrace) {
		g.cutAll(errors.New("gate closing"))
		g.waitFlights(cutWait)
	}
	g.settling.Wait()
	g.flushSuppressed(nil)
	return g.ledger.close()
}

// Grant creates a grant from s and returns it with its phantom credential.
// The credential is shown only here: the gate keeps its keyed hash.
func (g *Gate) Grant(ctx context.Context, s Spec) (Grant, secret.Value, error) {
	if err := s.validate(); err != nil {
		return Grant{}, secret.Value{}, err
	}
	if err := g.consumer(&s); err != nil {
		return Grant{}, secret.Value{}, err
	}
	p, err := g.price(s)
	if err != nil {
		return Grant{}, secret.Value{}, err
	}
	if s.OutputCeiling == 0 {
		s.OutputCeiling = 128000
	}
	if err := coversOne(s, p); err != nil {
		return Grant{}, secret.Value{}, err
	}
	phantom := newPhantom()
	id, err := g.ledger.create(ctx, s, p, g.opts.Key.digest(phantom.Reveal()), g.opts.Now())
	if err != nil {
		return Grant{}, secret.Value{}, err
	}
	g.ended.Forget(s.Job) // its next end is flushed again
	g.record(event.Event{Type: event.TypeDecision, Reason: "grant.created", Backend: string(s.Provider),
		Model: s.Model, IDs: map[string]string{"grant": id, "job": s.Job}})
	gr, err := g.ledger.get(ctx, nil, id)
	return gr, phantom, err
}

// ReasonBelowReservation is the reason of a grant refused because its
// spend or token budget cannot cover the reservation of one request.
const ReasonBelowReservation = "gate.budget_below_reservation"

// coversOne refuses a grant whose spend or token budget cannot cover even
// the smallest reservation a request naming no output limit makes — its
// output ceiling, at the output rate — so the CLI is not left retrying a
// request the gate can never admit (issue 19 item 14): such a request
// would be refused budget.request_spend or budget.request_tokens every
// time. The error is INVALID_INPUT with reason [ReasonBelowReservation]
// and, per budget too small, the detail "minimum_usd" (dollars, rounded
// up to the micro-dollar) or "minimum_tokens" (tokens); both when both are.
func coversOne(s Spec, p Price) error {
	min := reservation(0, s.OutputCeiling, p)
	var msgs []string
	details := map[string]string{}
	if min.Tokens > s.MaxTokens {
		msgs = append(msgs, fmt.Sprintf("the token budget %d cannot cover one request: a request naming no output limit reserves %d output tokens (the output ceiling); "+
			"give --max-tokens of at least %d, or a lower --output-ceiling", s.MaxTokens, min.Tokens, min.Tokens))
		details["minimum_tokens"] = strconv.FormatInt(min.Tokens, 10)
	}
	if min.Spend > s.MaxSpend {
		need := math.Ceil(min.Spend.Dollars()*1e6) / 1e6
		msgs = append(msgs, fmt.Sprintf("the spend budget $%g cannot cover one request: a request naming no output limit reserves %d output tokens (the output ceiling) at $%g per million = $%g; "+
			"give --max-usd of at least %g, or a lower --output-ceiling", s.MaxSpend.Dollars(), s.OutputCeiling, p.worst(0).OutputPerMTok, need, need))
		details["minimum_usd"] = strconv.FormatFloat(need, 'f', -1, 64)
	}
	if len(msgs) == 0 {
		return nil
	}
	e := fault.New(fault.InvalidInput, ReasonBelowReservation, strings.Join(msgs, "; and "))
	e.Details = details
	return e
}

// price returns the catalog price of s's model, else its own price.
func (g *Gate) price(s Spec) (Price, error) {
	if g.opts.Prices != nil {
		if p, ok := g.opts.Prices.Lookup(string(s.Provider), s.Model); ok {
			return p, nil
		}
	}
	if s.Price == nil {
		return Price{}, fault.New(fault.InvalidInput, "gate.price",
			fmt.Sprintf("no price known for %s model %q; give a per-grant price", s.Provider, s.Model))
	}
	return *s.Price, nil
}

// Inspect returns grant id with its counters, or [ErrNoGrant], and the
// reason of the latest request this gate refused for it.
func (g *Gate) Inspect(ctx context.Context, id string) (Grant, error) {
	gr, err := g.ledger.get(ctx, nil, id)
	if err == nil {
		g.mu.Lock()
		gr.LastRefusal = g.lastRefusal[id]
		g.mu.Unlock()
	}
	return gr, err
}

// refusedGrant notes reason as grant id's latest refusal.
func (g *Gate) refusedGrant(id, reason string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.lastRefusal[id]; !ok && len(g.lastRefusal) >= maxLastRefusals {
		g.lastRefusal = map[string]string{}
	}
	g.lastRefusal[id] = reason
}

// Revoke ends grant id: the next request is denied and streams in flight
// through this gate are cut now (through other gates within their
// WatchInterval). Revoking a grant that is not live is a no-op.
func (g *Gate) Revoke(ctx context.Context, id string) error {
	return g.end(ctx, id, Revoked)
}

// Settle closes grant id for good and returns its final counters; open
// reservations are still settled by their streams.
func (g *Gate) Settle(ctx context.Context, id string) (Grant, error) {
	if err := g.end(ctx, id, Settled); err != nil {
		return Grant{}, err
	}
	return g.ledger.get(ctx, nil, id)
}

func (g *Gate) end(ctx context.Context, id string, s State) error {
	gr, err := g.ledger.get(ctx, nil, id)
	if err != nil {
		return err
	}
	changed, err := g.ledger.setState(ctx, id, s)
	if err != nil {
		return err
	}
	g.cutGrant(id, fmt.Errorf("grant %s", s))
	if changed {
		g.record(event.Event{Type: event.TypeDecision, Reason: "grant." + string(s), IDs: map[string]string{"grant": id}})
		g.flushSuppressed(&gr.Job)
	}
	return nil
}

// binding returns the immutable binding of the grant whose phantom hashes to
// hash. Only provider, model, job, secret reference and price are used from
// it: liveness and budgets are re-read atomically on every request.
func (g *Gate) binding(ctx context.Context, hash []byte) (Grant, error) {
	g.mu.Lock()
	b, ok := g.bindings[string(hash)]
	g.mu.Unlock()
	if ok {
		return b, nil
	}
	b, stored, err := g.ledger.byHash(ctx, hash)
	if err != nil {
		return Grant{}, err
	}
	if !hmac.Equal(stored, hash) {
		return Grant{}, ErrNoGrant
	}
	g.mu.Lock()
	g.bindings[string(hash)] = b
	g.mu.Unlock()
	return b, nil
}

func (g *Gate) record(e event.Event) {
	e.Time = g.opts.Now().UTC()
	g.opts.Events.Record(e) // a failing sink must not open the gate or block it
}
