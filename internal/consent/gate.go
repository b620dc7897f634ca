package consent

import (
	"context"
	"crypto/rand"
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/policy"
)

// DefaultTimeout is how long a user has to answer.
const DefaultTimeout = 5 * time.Minute

// Options configures a [Gate]. Sink is required; zero values of the other
// fields take the documented defaults.
type Options struct {
	// Sink receives one event per refusal. Required.
	Sink event.Sink
	// Timeout bounds an unanswered elicitation; 0 = DefaultTimeout.
	Timeout time.Duration
	// ConfigPath is the config file "remember" edits (config.Env.ConfigPath);
	// "" disables remembering (the turn still runs once).
	ConfigPath string
	// Now is the clock; nil = time.Now.
	Now func() time.Time
}

// Gate asks for consent. It is safe for concurrent use; create one per
// server process with [New].
type Gate struct {
	sink       event.Sink
	timeout    time.Duration
	configPath string
	now        func() time.Time
	key        []byte // signs request state; never leaves the process

	mu   sync.Mutex
	used map[string]time.Time // accepted state nonces → expiry (replay guard)
}

// New returns a Gate. It fails if o.Sink is nil or o.Timeout is negative.
func New(o Options) (*Gate, error) {
	if o.Sink == nil {
		return nil, errors.New("consent: Options.Sink is required")
	}
	if o.Timeout < 0 {
		return nil, errors.New("consent: negative Timeout")
	}
	g := &Gate{sink: o.Sink, timeout: o.Timeout, configPath: o.ConfigPath, now: o.Now, used: map[string]time.Time{}}
	if g.timeout == 0 {
		g.timeout = DefaultTimeout
	}
	if g.now == nil {
		g.now = time.Now
	}
	g.key = make([]byte, 32)
	if _, err := rand.Read(g.key); err != nil {
		return nil, err
	}
	return g, nil
}

// Outcome is an admitted turn.
type Outcome struct {
	// Asked reports whether the user answered an elicitation (false for
	// allow decisions).
	Asked bool
	// Remembered reports whether the model was added to
	// governance.models.allow.
	Remembered bool
	// Warning is a non-fatal notice for the result (e.g. the remember write
	// failed); it contains no path or secret.
	Warning string
}

// Check decides whether the turn of d may start. Exactly one of its
// results is meaningful:
//
//   - err != nil: refuse the turn with err (a *fault.Error, POLICY_DENIED
//     or INVALID_INPUT); one security event has been recorded.
//   - res != nil: return res to the client as the tool result now
//     (elicitation input requests); the client will call again.
//   - otherwise the turn is approved: start the backend, then check the
//     model it reports with [policy.CheckReported].
//
// req must be the tool call being served; d must come from [policy.Decide]
// for this call (on the retried call too).
func (g *Gate) Check(ctx context.Context, req *mcp.CallToolRequest, d policy.Decision) (Outcome, *mcp.CallToolResult, error) {
	switch d.Effect {
	case policy.Allow:
		return Outcome{}, nil, nil
	case policy.Deny:
		return Outcome{}, nil, g.Refuse(d.Err(), d.Backend, d.Model, d.Rule)
	}
	if req == nil || req.Params == nil {
		return Outcome{}, nil, g.deny(d, ReasonUnsupportedClient)
	}
	if len(req.Params.InputResponses) > 0 || req.Params.RequestState != "" {
		return g.answered(req, d)
	}
	if !canElicitForm(req.ClientCapabilities()) {
		return Outcome{}, nil, g.deny(d, ReasonUnsupportedClient)
	}
	if multiRoundTrip(req.ProtocolVersion()) {
		return Outcome{}, g.inputRequest(d, callBinding(req, d)), nil
	}
	return g.elicitLegacy(ctx, req, d)
}

// Refuse records one security event for a POLICY_DENIED (or other) error
// raised outside Check — a governance config error, a model mismatch — and
// returns it as a *fault.Error. Do not call it for errors Check returned.
func (g *Gate) Refuse(err error, backend, model, rule string) error {
	fe := fault.From(err)
	return g.record(fe, backend, model, rule, fe.Cause())
}

// record writes the one security event of a refusal. The cause goes to
// Detail (the sink redacts it); prompt text never reaches here.
func (g *Gate) record(fe *fault.Error, backend, model, rule string, cause error) *fault.Error {
	e := event.Event{Type: event.TypeRefusal, Code: string(fe.Code), Reason: fe.Reason, Backend: backend, Rule: rule}
	if policy.ValidID(model) {
		e.Model = model
	}
	if cause != nil {
		e.Detail = cause.Error()
	}
	_ = g.sink.Record(e) // a failing sink must not turn a refusal into a run
	return fe
}

// canElicitForm reports whether the client declared form elicitation. An
// empty elicitation object means form (2025-06-18 compatibility); URL-only
// clients cannot show our form.
func canElicitForm(c *mcp.ClientCapabilities) bool {
	if c == nil || c.Elicitation == nil {
		return false
	}
	return c.Elicitation.Form != nil || c.Elicitation.URL == nil
}

// multiRoundTrip reports whether the protocol revision uses InputRequests
// instead of server-initiated requests (MCP 2026-07-28). Revisions are
// ISO dates, so they compare as strings.
func multiRoundTrip(version string) bool { return version >= "2026-07-28" }

// remember performs the "remember" write for an approved answer.
func (g *Gate) remember(d policy.Decision, content map[string]any) Outcome {
	out := Outcome{Asked: true}
	if want, _ := content["remember"].(bool); !want || !d.Remember || g.configPath == "" {
		return out
	}
	if err := config.AddAllowedModel(g.configPath, d.Model); err != nil {
		out.Warning = "the approval could not be remembered; the model will be asked for again"
		return out
	}
	out.Remembered = true
	return out
}
