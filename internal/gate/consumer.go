package gate

import (
	"fmt"
	"maps"
	"slices"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/secret"
)

// checkCredentials validates [Options.Credentials]: known providers,
// non-zero references, and no reference declared for two providers: a
// credential is one provider's, and its kind is checked per
// reference ([kindResolver]), which one reference of two kinds would
// decide by map order.
func checkCredentials(c map[Provider]secret.Ref) error {
	owner := map[secret.Ref]Provider{}
	for _, p := range slices.Sorted(maps.Keys(c)) {
		ref := c[p]
		if _, err := ParseProvider(string(p)); err != nil {
			return err
		}
		if ref.IsZero() {
			return fault.New(fault.InvalidInput, "gate.credentials", "empty credential reference for "+string(p))
		}
		if q, ok := owner[ref]; ok {
			return fault.New(fault.InvalidInput, "gate.credentials", fmt.Sprintf(
				"gate.credentials.%s and gate.credentials.%s both declare %s: a credential belongs to one provider; declare each provider's own", q, p, ref))
		}
		owner[ref] = p
	}
	return nil
}

// consumer checks that s names the credential declared for its provider,
// or fills it in (issue 18 scope 3, R-101): a grant cannot point the
// gate at an arbitrary file or variable. A refusal is a security event
// naming the reference, never a value.
func (g *Gate) consumer(s *Spec) error {
	if g.opts.Credentials == nil && !s.Secret.IsZero() {
		return nil // declares nothing: the grant is inert (resolve refuses)
	}
	declared, ok := g.opts.Credentials[s.Provider]
	if ok && chatGPTLogin(s.Provider, declared) {
		return chatGPTRefusal()
	}
	switch {
	case ok && (s.Secret.IsZero() || s.Secret == declared):
		s.Secret = declared
		return nil
	case !ok:
		return g.undeclared(s, fmt.Sprintf("no credential is declared for %s: set gate.credentials.%s in config.json to a reference (env:NAME or file:/abs/path)", s.Provider, s.Provider))
	}
	// A reference names where a secret lives, never the secret: naming the
	// declared one tells the user which of the two to fix.
	return g.undeclared(s, fmt.Sprintf("the grant names %s, but gate.credentials.%s declares %s: a grant can only use the declared credential (omit the grant's reference to use it)", s.Secret, s.Provider, declared))
}

func (g *Gate) undeclared(s *Spec, msg string) error {
	g.record(event.Event{Type: event.TypeRefusal, Code: string(fault.PolicyDenied), Reason: ReasonUndeclared,
		Backend: string(s.Provider), Detail: "secret reference " + s.Secret.String(), IDs: map[string]string{"job": s.Job}})
	return fault.New(fault.PolicyDenied, ReasonUndeclared, msg)
}
