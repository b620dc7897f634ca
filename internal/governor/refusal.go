package governor

import "slices"

// The consent refusals that are the user's own no, or a retried call that
// carried no valid answer. internal/consent produces them (its
// Reason constants are these); they live here because consent imports
// governor and the governor's remedy ([withRemedy]) must know the same set.
const (
	ReasonConsentDeclined      = "consent.declined"       // action "decline"
	ReasonConsentNotApproved   = "consent.not_approved"   // accepted with approve: false
	ReasonConsentInvalidAnswer = "consent.invalid_answer" // approve missing or not a boolean; unknown action
	ReasonConsentInvalidState  = "consent.invalid_state"  // retried call with a missing, forged, replayed or foreign state
)

var noWayAround = [...]string{ReasonConsentDeclined, ReasonConsentNotApproved, ReasonConsentInvalidAnswer, ReasonConsentInvalidState}

// NoWayAround reports whether a refusal with reason must name no way
// around the question (an allow list, a terminal command): the user
// answered no themselves (declined, approve false), or the retried call
// carried no valid answer (a forged, replayed or altered state, no
// approve). The refusal text reaches the calling agent, and there it
// would read as the way to undo the user's answer. A refusal nobody gave
// (no form support, a time-out, a dismissal) still names the way forward.
// Every surface that asks uses it: consult's refusals (internal/consent),
// the governor's remedy, delegate's job question and request_admission's
// form (internal/mcpserver).
func NoWayAround(reason string) bool { return slices.Contains(noWayAround[:], reason) }

// NoWayAroundReasons returns the reasons [NoWayAround] accepts, in a
// fresh slice.
func NoWayAroundReasons() []string { return slices.Clone(noWayAround[:]) }
