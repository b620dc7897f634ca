package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gate"
	"github.com/coagent8/coagent8/internal/quarantine"
	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/secret"
	"github.com/coagent8/coagent8/internal/store"
	"github.com/coagent8/coagent8/internal/upstream"
)

// newGateCmd is `coagent8 gate serve|grant|inspect|revoke|settle` (issue 9).
func newGateCmd(a *app) *cobra.Command {
	c := &cobra.Command{Use: "gate", Short: "Provider gate: phantom-credential grants and the local gate server"}
	c.AddCommand(newGateServeCmd(a), newGateGrantCmd(a), newGateIDCmd(a, "inspect"),
		newGateRevokeCmd(a), newGateIDCmd(a, "settle"))
	return c
}

// deciderFunc builds a gate's egress decider on its database and sink.
type deciderFunc func(ctx context.Context, db *store.DB, events event.Sink) (gate.EgressDecider, error)

// noForwarding is the decider of subcommands that never serve.
func noForwarding(context.Context, *store.DB, event.Sink) (gate.EgressDecider, error) {
	return refuseEgress{}, nil
}

// openGate opens the state database, key and event log of this user and
// the egress decider from decide.
func (a *app) openGate(ctx context.Context, opts gate.Options, decide deciderFunc) (*gate.Gate, func(), error) {
	dir := a.env.StateDir()
	db, err := store.Open(ctx, filepath.Join(dir, "state.db"), 0)
	if err != nil {
		return nil, nil, err
	}
	key, err := gate.LoadKey(filepath.Join(dir, "gate.key"))
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	sink, err := event.OpenFile(filepath.Join(dir, "events.jsonl"), redact.NewDiagnostic(a.env.Home()))
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	// Decisions are written off the request path (event.Queue); refusals
	// and compromise events before the gate answers.
	q := event.NewQueue(sink)
	closeLog := func() { q.Close(); sink.Close() }
	opts.DB, opts.Key, opts.Events = db, key, q
	if opts.Egress, err = decide(ctx, db, q); err != nil {
		closeLog()
		db.Close()
		return nil, nil, err
	}
	opts.Secrets = secret.Resolver{Env: a.env}
	opts.Redactor = redact.NewDiagnostic(a.env.Home())
	g, err := gate.New(ctx, opts)
	if err != nil {
		closeLog()
		db.Close()
		return nil, nil, err
	}
	return g, func() { g.Close(); closeLog(); db.Close() }, nil
}

func (a *app) printJSON(v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := a.io.Out.Write(inertJSON(b.Bytes()))
	return err
}

// inertJSON writes DEL, C1 and bidirectional controls of encoded JSON as
// \u escapes. encoding/json escapes C0 controls only, and what is printed
// carries the agent's file names (`jobs JOB` findings, `admit` paths): a
// raw U+009B is CSI to a terminal, U+202E reorders what the user reads.
// Outside strings JSON is ASCII, so this is the same data to any reader.
func inertJSON(b []byte) []byte {
	var out bytes.Buffer
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == 0x7f || quarantine.ActsOnDisplay(r) {
			fmt.Fprintf(&out, "\\u%04x", r)
		} else {
			out.Write(b[i : i+n])
		}
		i += n
	}
	return out.Bytes()
}

type gateGrantOptions struct {
	provider, model, job, secretRef string
	ttl                             time.Duration
	maxRequests, maxTokens, ceiling int64
	maxUSD                          float64
	price                           gate.Price
}

func newGateGrantCmd(a *app) *cobra.Command {
	var o gateGrantOptions
	c := &cobra.Command{
		Use:   "grant",
		Short: "Create a grant and print its phantom credential (shown only once)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.gateGrant(cmd.Context(), o, cmd.Flags().Changed)
		},
	}
	fl := c.Flags()
	fl.StringVar(&o.provider, "provider", "", "anthropic or openai (required)")
	fl.StringVar(&o.model, "model", "", "exact model id requests must name (required)")
	fl.StringVar(&o.job, "job", "", "job id the grant belongs to (required)")
	fl.StringVar(&o.secretRef, "secret", "", "reference to the real credential; must be the one config.json declares in gate.credentials.<provider> (default: that one)")
	fl.DurationVar(&o.ttl, "ttl", time.Hour, "lifetime of the grant")
	fl.Int64Var(&o.maxRequests, "max-requests", 0, "request budget (required; 1..10000)")
	fl.Int64Var(&o.maxTokens, "max-tokens", 0, "input+output token budget (required)")
	fl.Float64Var(&o.maxUSD, "max-usd", 0, "spend budget in USD (required; above 0, at most 10000)")
	fl.Int64Var(&o.ceiling, "output-ceiling", 0, "output tokens reserved when a request names no limit (0 = 128000)")
	fl.Float64Var(&o.price.InputPerMTok, "price-input", 0, "USD per million input tokens (required: each grant carries its own prices)")
	fl.Float64Var(&o.price.OutputPerMTok, "price-output", 0, "USD per million output tokens (required; 0 only for a model whose output is free)")
	fl.Float64Var(&o.price.CacheWritePerMTok, "price-cache-write", 0, "USD per million cache-write tokens (default: twice --price-input, the dearest provider rate, at most --price-long-cache-write; 0 only if they are free)")
	fl.Float64Var(&o.price.CacheReadPerMTok, "price-cache-read", 0, "USD per million cache-read tokens (default: --price-input, at most --price-long-cache-read; 0 only if they are free)")
	fl.Int64Var(&o.price.LongContextTokens, "price-long-context-tokens", 0,
		"long-context tier: above this many input tokens (cache included) a request is priced at the --price-long-* rates (0 = no tier)")
	fl.Float64Var(&o.price.LongInputPerMTok, "price-long-input", 0, "long-context tier: USD per million input tokens")
	fl.Float64Var(&o.price.LongOutputPerMTok, "price-long-output", 0, "long-context tier: USD per million output tokens")
	fl.Float64Var(&o.price.LongCacheWritePerMTok, "price-long-cache-write", 0, "long-context tier: USD per million cache-write tokens (default: twice --price-long-input)")
	fl.Float64Var(&o.price.LongCacheReadPerMTok, "price-long-cache-read", 0, "long-context tier: USD per million cache-read tokens (default: --price-long-input)")
	return c
}

// missingGrantFlags names every required grant flag left unset, in help
// order, so one error lists them all (issue 19 item 14). A number flag is
// missing only when not given: an explicit --max-usd 0 is a bad value,
// which the grant's validation names, not a missing flag.
func missingGrantFlags(o gateGrantOptions, given func(flag string) bool) []string {
	var miss []string
	for _, f := range []struct {
		name  string
		unset bool
	}{
		{"--provider", o.provider == ""}, {"--model", o.model == ""}, {"--job", o.job == ""}, {"--max-requests", !given("max-requests")},
		{"--max-tokens", !given("max-tokens")}, {"--max-usd", !given("max-usd")}, {"--price-input", !given("price-input")},
		{"--price-output", !given("price-output")},
	} {
		if f.unset {
			miss = append(miss, f.name)
		}
	}
	return miss
}

func (a *app) gateGrant(ctx context.Context, o gateGrantOptions, given func(flag string) bool) error {
	if miss := missingGrantFlags(o, given); len(miss) > 0 {
		return fault.New(fault.InvalidInput, "gate.flags_missing", "gate grant needs "+strings.Join(miss, ", ")+
			" (see coagent8 gate grant --help)").With("missing", strings.Join(miss, ","))
	}
	if !(o.maxUSD <= 0) { // NaN, +Inf, 1e308: zero and negative are the grant's own refusal
		if err := config.CheckBudgetUSD("--max-usd", o.maxUSD); err != nil {
			return err
		}
	}
	if o.maxRequests > config.MaxBudgetRequests {
		return config.CheckBudgetCount("--max-requests", o.maxRequests, 1, config.MaxBudgetRequests)
	}
	p, err := gate.ParseProvider(o.provider)
	if err != nil {
		return err
	}
	var ref secret.Ref
	if o.secretRef != "" {
		if ref, err = secret.ParseRef(o.secretRef); err != nil {
			return fault.New(fault.InvalidInput, "gate.secret", "--secret must be env:NAME or file:/abs/path (never the key itself)")
		}
	}
	creds, err := a.gateCredentials()
	if err != nil {
		return err
	}
	s := gate.Spec{Provider: p, Model: o.model, Job: o.job, TTL: o.ttl, Secret: ref, MaxRequests: o.maxRequests,
		MaxTokens: o.maxTokens, MaxSpend: gate.USD(o.maxUSD), OutputCeiling: o.ceiling}
	if given("price-input") {
		s.Price = &o.price
		defaultCachePrices(&o.price, given)
	}
	g, closeFn, err := a.openGate(ctx, gate.Options{Credentials: creds}, noForwarding)
	if err != nil {
		return err
	}
	defer closeFn()
	gr, phantom, err := g.Grant(ctx, s)
	if err != nil {
		return err
	}
	// The one place the phantom credential is shown (stdout of its creator).
	return a.printJSON(struct {
		gate.Grant
		Phantom string `json:"phantom"`
	}{gr, phantom.Reveal()})
}

// defaultCachePrices fills the cache prices of p not given on the command
// line. A cache class left out is charged, never free: Claude Code reads
// most of its input from the prompt cache, and a cache price of 0 let
// those tokens pass the USD budget uncounted. Unset, each takes the
// dearest rate a provider charges for it relative to input (Anthropic:
// 1.25x or 2x to write). With a long-context tier, a defaulted rate also
// keeps the tier's rule (each long rate at least its base rate) against
// the rate given for the other tier: a defaulted base rate is at most the
// long rate given, a defaulted long rate at least the base rate given, so
// the provider's own prices with one tier's cache prices left out are
// not refused gate.price. A long rate given as 0 never makes a defaulted
// base rate free: that grant is refused gate.price, as before.
func defaultCachePrices(p *gate.Price, given func(flag string) bool) {
	write, read := !given("price-cache-write"), !given("price-cache-read")
	longWrite, longRead := !given("price-long-cache-write"), !given("price-long-cache-read")
	if write {
		p.CacheWritePerMTok = 2 * p.InputPerMTok
	}
	if read {
		p.CacheReadPerMTok = p.InputPerMTok
	}
	if longWrite {
		p.LongCacheWritePerMTok = 2 * p.LongInputPerMTok
	}
	if longRead {
		p.LongCacheReadPerMTok = p.LongInputPerMTok
	}
	if p.LongContextTokens <= 0 {
		return
	}
	switch {
	case write && !longWrite && p.LongCacheWritePerMTok > 0:
		p.CacheWritePerMTok = min(p.CacheWritePerMTok, p.LongCacheWritePerMTok)
	case longWrite && !write:
		p.LongCacheWritePerMTok = max(p.LongCacheWritePerMTok, p.CacheWritePerMTok)
	}
	switch {
	case read && !longRead && p.LongCacheReadPerMTok > 0:
		p.CacheReadPerMTok = min(p.CacheReadPerMTok, p.LongCacheReadPerMTok)
	case longRead && !read:
		p.LongCacheReadPerMTok = max(p.LongCacheReadPerMTok, p.CacheReadPerMTok)
	}
}

func newGateIDCmd(a *app, verb string) *cobra.Command {
	short := map[string]string{"inspect": "Show a grant's binding, budgets and counters",
		"revoke": "Revoke a grant: deny the next request and cut its streams",
		"settle": "Close a grant for good and print its final counters"}[verb]
	return &cobra.Command{
		Use:   verb + " GRANT_ID",
		Short: short,
		Args:  wantArgs("GRANT_ID"),
		RunE:  func(cmd *cobra.Command, args []string) error { return a.gateByID(cmd.Context(), verb, args[0]) },
	}
}

func (a *app) gateByID(ctx context.Context, verb, id string) error {
	g, closeFn, err := a.openGate(ctx, gate.Options{}, noForwarding)
	if err != nil {
		return err
	}
	defer closeFn()
	var gr gate.Grant
	switch verb {
	case "inspect":
		gr, err = g.Inspect(ctx, id)
	case "revoke":
		if err = g.Revoke(ctx, id); err == nil {
			gr, err = g.Inspect(ctx, id)
		}
	case "settle":
		gr, err = g.Settle(ctx, id)
	}
	if errors.Is(err, gate.ErrNoGrant) {
		return fault.New(fault.InvalidInput, "gate.grant", "no grant with id "+id)
	}
	if err != nil {
		return err
	}
	if verb != "inspect" {
		return a.printJSON(gr)
	}
	// inspect also lists the grant's transmission attempts (issue 18
	// scope 4): state, decision evidence digest, reserved and charged.
	as, err := g.Attempts(ctx, id)
	if err != nil {
		return err
	}
	if as == nil {
		as = []gate.Attempt{}
	}
	return a.printJSON(struct {
		gate.Grant
		Attempts []gate.Attempt `json:"attempts"`
	}{gr, as})
}

const gateServeLong = `Serve the provider gate on a loopback address.

The real credentials are the references config.json declares in
gate.credentials.<provider> (env:NAME or file:/abs/path); each resolves
only for its provider, and a config.json holding a literal credential
refuses to start. The gate builds every upstream request itself: fixed
origin, the route's header allowlist, the real credential, the decided
body; every response byte is checked for the real credential before the
client sees it.

Every request body is settled by an egress decision before its first byte
leaves: who sends (operator and job), to which provider route and model,
which exact bytes, on what basis, under which policy revision and against
which remaining disclosure capacity. Refusals answer 403 (policy), 401
(credential), 400, 408 or 431 (malformed or stalled input), 402 (a budget
that can never pay), 429 (retry once requests in flight settle) or 502
(upstream), with the reason in X-Coagent8-Gate-Reason, and are recorded as
security events.

The policy is the "egress" section of config.json. Without one the
built-in policy applies: no labels; unlabelled content weighs 0.0;
credentials are non-declassifiable, so a body carrying a provider key or
other credential is refused; portal_threshold 0.3, forbidden_threshold 0.8;
capacity for provider-request, 1,000,000 transmissions and 256 GiB of
request bodies per host, with no time window and no refund (the only
other purpose, closed-diagnostic-recording, is local and never
transmitted). A malformed "egress" section refuses to start.

When a label names workspace paths, --workspace is required: it is the
working tree whose labelled files the gate fingerprints to learn what a
request body was copied from.`

func newGateServeCmd(a *app) *cobra.Command {
	var listen, workspace string
	var unsafeUpstreams []string
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the provider gate on a loopback address (every body egress-decided)",
		Long:  gateServeLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.gateServe(cmd.Context(), listen, workspace, unsafeUpstreams)
		},
	}
	c.Flags().StringVar(&listen, "listen", "127.0.0.1:8787", "loopback host:port to listen on")
	c.Flags().StringVar(&workspace, "workspace", "", "working tree the egress policy's path labels refer to (required when a label has paths)")
	c.Flags().StringArrayVar(&unsafeUpstreams, "unsafe-loopback-upstream", nil,
		"PROVIDER=http://127.0.0.1:PORT: forward to a local provider double (tests and benchmarks only; sends the real credential in clear text)")
	c.Flags().MarkHidden("unsafe-loopback-upstream")
	return c
}

func (a *app) gateServe(ctx context.Context, listen, workspace string, unsafe []string) error {
	if _, _, err := a.egressPolicy(); err != nil {
		return err // an unreadable file is first an unknown egress policy
	}
	creds, err := a.gateCredentials()
	if err != nil {
		return err
	}
	hops, err := a.gateIntermediaries()
	if err != nil {
		return err
	}
	opts := gate.Options{Credentials: creds, Intermediaries: hops}
	for _, v := range unsafe {
		// The same rule as COAGENT8_UNSAFE_LOOPBACK_UPSTREAM: only a
		// loopback origin with a port may receive the real credential.
		u, err := upstream.ParseUnsafeFrom("--unsafe-loopback-upstream", v)
		if err != nil {
			return err
		}
		if opts.Upstreams == nil {
			opts.Upstreams = map[gate.Provider]string{}
		}
		opts.Upstreams[gate.Provider(u.Provider)] = u.Origin
		opts.UnsafeAllowLoopbackUpstream = true
	}
	var source string
	decide := func(ctx context.Context, db *store.DB, events event.Sink) (gate.EgressDecider, error) {
		d, src, err := a.egressDecider(ctx, db, events, workspace)
		source = src
		return d, err
	}
	g, closeFn, err := a.openGate(ctx, opts, decide)
	if err != nil {
		return err
	}
	defer closeFn()
	ln, err := gate.Listen(listen, nil)
	if err != nil {
		return err
	}
	h := newInflight(g)
	srv := g.Server(h)
	stopped := make(chan struct{})
	go func() { <-ctx.Done(); stopServing(srv, h); close(stopped) }()
	a.printJSON(map[string]string{"listening": "http://" + ln.Addr().String(), "egress_policy": source})
	if err := g.Serve(srv, ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	<-stopped // every exchange settled before the gate and its database close
	return nil
}
