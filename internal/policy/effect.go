package policy

import "fmt"

// Effect is the outcome of a decision. The zero value is [Deny] so that an
// uninitialised Decision fails closed.
type Effect int

// Effects, from most to least restrictive.
const (
	Deny  Effect = iota // the model must not run (POLICY_DENIED)
	Ask                 // the user must approve this turn through elicitation
	Allow               // the model may run without asking
)

// String returns "deny", "ask" or "allow"; it panics on any other value,
// which can only come from a conversion bug.
func (e Effect) String() string {
	switch e {
	case Deny:
		return "deny"
	case Ask:
		return "ask"
	case Allow:
		return "allow"
	}
	panic(fmt.Sprintf("policy: invalid Effect %d", int(e)))
}

// Match records how a price was found for a model id.
type Match int

// Match kinds. The zero value [MatchNone] means no price is known.
const (
	MatchNone   Match = iota // no catalog entry
	MatchApprox              // found only after normalisation (dots/dashes, dates, routing variants)
	MatchExact               // author/id equal to a catalog id or canonical slug
)

// String returns "none", "approximate" or "exact"; it panics otherwise.
func (m Match) String() string {
	switch m {
	case MatchNone:
		return "none"
	case MatchApprox:
		return "approximate"
	case MatchExact:
		return "exact"
	}
	panic(fmt.Sprintf("policy: invalid Match %d", int(m)))
}
