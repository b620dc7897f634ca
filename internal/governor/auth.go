package governor

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/policy"
	"github.com/coagent8/coagent8/internal/price"
	"github.com/coagent8/coagent8/internal/turn"
)

// logins says how to log each backend's CLI in (its own documentation).
var logins = map[string]struct{ product, login string }{
	"claude": {"Claude Code", "run `claude` and use /login"},
	"codex":  {"Codex", "run `codex login`"},
	"agy":    {"agy", "run `agy` and sign in"},
}

// authenticated refuses a backend whose metadata-only probe reports it is
// not logged in, with AUTH_REQUIRED <backend>.not_logged_in, before the
// user is asked to approve a turn that could not run (issue 19 item 11).
// "unknown" (no answer from the CLI) is not a refusal: the turn itself
// reports a real failure.
func (g *Governor) authenticated(ctx context.Context, backend string) error {
	b := g.runner.Backend(backend)
	if b == nil || b.Probe(ctx).AuthStatus != "unauthenticated" {
		return nil
	}
	l, ok := logins[backend]
	if !ok {
		l.product, l.login = backend, "log it in"
	}
	msg := l.product + " is not logged in, so the turn was refused before asking for approval: " + l.login + ", then retry"
	if hint := g.env.StrippedKeysHint(backend); hint != "" {
		msg += ". " + hint
	}
	return fault.New(fault.AuthRequired, backend+".not_logged_in", msg+".").With("backend", backend)
}

// explainAuth adds, to an AUTH_REQUIRED outcome, that a provider key is
// set but withheld because API-key billing is off, naming
// COAGENT8_API_KEY_BILLING (issue 19 item 10): "not logged in" alone
// points an API-key user the wrong way.
func (g *Governor) explainAuth(o *turn.Outcome, backend string) {
	if o.Error == nil || o.Error.Code != string(fault.AuthRequired) || strings.Contains(o.Error.Message, config.BillingVar) {
		return
	}
	if hint := g.env.StrippedKeysHint(backend); hint != "" {
		o.Error.Message = strings.TrimRight(o.Error.Message, ". ") + ". " + hint + "."
	}
}

// withRemedy adds the exact terminal command that lets model run without
// asking to a consent refusal (issue 19 item 9): a terminal, or a host
// that cannot show the form, would otherwise refuse the backend's default
// model on every turn with no way forward named. The command carries
// --unlisted when the price list does not know model, which `governance
// allow` would otherwise refuse as governance.unknown_model.
//
// No remedy follows the user's own no (a decline a person gave, approve
// false) or a retried call with no valid answer (forged, replayed or
// altered state, no approve): the message goes to the calling agent,
// which must not be handed the command that undoes the user's answer
// ([NoWayAround], which consent's refusal messages use too).
func withRemedy(err error, d policy.Decision) error {
	var fe *fault.Error
	model := d.Model
	if !errors.As(err, &fe) || fe.Code != fault.PolicyDenied || !policy.ValidID(model) || usersNo(fe) {
		return err
	}
	cmd := "coagent8 governance allow " + model
	if !listed(d) {
		cmd += " --unlisted"
	}
	out := fault.Wrap(fe.Code, fe.Reason, strings.TrimRight(fe.Message, ". ")+
		". To let it run without asking, run `"+cmd+"` in a terminal (it adds the id to governance.models.allow).", fe.Cause())
	out.Retryable = fe.Retryable
	for k, v := range fe.Details {
		out = out.With(k, v)
	}
	return out.With("remedy", cmd)
}

// usersNo reports whether fe is the user's own refusal or a retry with no
// valid answer (see withRemedy). A decline the host gave faster than a
// person can answer carries answered_by "host" and is nobody's no.
func usersNo(fe *fault.Error) bool {
	if fe.Reason == ReasonConsentDeclined && fe.Details["answered_by"] == "host" {
		return false
	}
	return NoWayAround(fe.Reason)
}

// listed reports whether `governance allow` knows d's model: the price
// list in force prices it (exactly or approximately), or it is one of
// the embedded snapshot's deliberately unpriced models.
func listed(d policy.Decision) bool {
	if d.PriceMatch != policy.MatchNone {
		return true
	}
	ids := []string{d.Model}
	if base, ok := policy.StripEffort(d.Model); ok {
		ids = append(ids, base)
	}
	return slices.ContainsFunc(price.UnpricedIDs(), func(u string) bool {
		return slices.ContainsFunc(ids, func(id string) bool { return strings.EqualFold(u, id) })
	})
}
