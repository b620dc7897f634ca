package verify

import (
	"fmt"
	"strings"

	"github.com/coagent8/coagent8/internal/review"
)

// ReasonFailed is the review's BLOCKED reason when a configured check
// failed and the model's review was otherwise READY.
const ReasonFailed = "Verification checks failed"

// Judgement is what the real checks mean for a review.
type Judgement struct {
	// Failed reports whether any check ran and failed: a failing real
	// check blocks READY.
	Failed bool
	// Warnings compare each check with the model's CHECKS claim, e.g.
	// "the model claimed tests=PASS but `go test ./...` exited 1".
	Warnings []string
}

// Judge compares checks with the model's CHECKS line. A check that did
// not run is a warning, never a pass and not a failure: the review still
// stands on its own, and the warning says the claim is unverified.
func Judge(checks []Check, claimed review.Checks) Judgement {
	var j Judgement
	for _, c := range checks {
		name, claim := claimFor(c.Kind, claimed)
		switch {
		case c.Status == Failed:
			j.Failed = true
			if strings.EqualFold(claim, "PASS") {
				j.Warnings = append(j.Warnings, fmt.Sprintf("the model claimed %s=PASS but `%s` %s", name, c.Display(), c.Outcome()))
			} else {
				j.Warnings = append(j.Warnings, fmt.Sprintf("configured check `%s` %s", c.Display(), c.Outcome()))
			}
		case c.Status == NotRun:
			j.Warnings = append(j.Warnings, fmt.Sprintf("configured check `%s` %s", c.Display(), c.Outcome()))
		case strings.EqualFold(claim, "FAIL"):
			j.Warnings = append(j.Warnings, fmt.Sprintf("the model claimed %s=FAIL but `%s` passed", name, c.Display()))
		}
	}
	return j
}

// claimFor returns the envelope claim a check of kind k answers. A check
// of unknown kind answers whichever claim says PASS (tests first), so a
// PASS claim is never left standing next to a failing check.
func claimFor(k Kind, c review.Checks) (name, value string) {
	switch k {
	case KindTests:
		return "tests", c.Tests
	case KindTypecheck:
		return "typecheck", c.Typecheck
	}
	if strings.EqualFold(c.Typecheck, "PASS") && !strings.EqualFold(c.Tests, "PASS") {
		return "typecheck", c.Typecheck
	}
	return "tests", c.Tests
}
