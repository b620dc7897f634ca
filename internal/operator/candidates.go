package operator

import (
	"context"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
)

// Candidates is the seam for quarantined candidate patches (the
// `delegate` job, issue 16). The dashboard lists and shows candidates and
// passes Admit and Reject through the same request chain as every other
// route; the implementation owns the atomic apply (the same as
// `coagent8 admit`) and returns typed errors (*fault.Error) for an unknown
// id, a second admission, a candidate other than the one the operator was
// shown, or a tainted or expired candidate admitted without acknowledging
// the reason. Implementations must be safe for
// concurrent use.
type Candidates interface {
	// List returns the candidates, newest first.
	List(ctx context.Context) ([]CandidateSummary, error)
	// Get returns one candidate in full.
	Get(ctx context.Context, id string) (Candidate, error)
	// Admit applies the candidate to the user's checkout; digest is the
	// [Candidate.Digest] the operator was shown (the page's form carries
	// it), and a candidate whose digest is not that one now is refused;
	// ack names the reasons (taint, expiry) the operator acknowledged.
	Admit(ctx context.Context, id, digest string, ack []string) error
	// Reject discards the candidate.
	Reject(ctx context.Context, id string) error
}

// CandidateSummary is one row of the candidate list.
type CandidateSummary struct {
	ID, Job, State string
	Created        time.Time
	Findings       int
	// Summary is the diff summary ("2 file(s), +5 −1"); Taint why the
	// candidate is tainted ("" when it is not).
	Summary, Taint string
}

// Candidate is a candidate patch with everything the operator judges it
// by. Diff and every finding's text are untrusted: they are redacted and
// shown as data.
type Candidate struct {
	CandidateSummary
	// Digest identifies the patch bytes ("" while there is no patch); the
	// admit form sends it back.
	Digest     string
	Diff       string
	Findings   []Finding
	Checks     []Check
	Provenance map[string]string
	// Acknowledge lists reasons admission must acknowledge (e.g.
	// "tainted", "expired"); empty when none.
	Acknowledge []string
}

// Finding is one scan finding.
type Finding struct {
	Severity, Rule, File, Message string
	Line                          int
}

// Check is one verification command and its real exit status.
type Check struct {
	Command, Status string
	Exit            int
}

// noCandidates is the source used until the `delegate` job exists: empty,
// and every action refused.
type noCandidates struct{}

var errNoCandidates = fault.New(fault.Unsupported, "operator.candidates_unavailable",
	"Candidate admission needs the delegate job (issue 16), which this build does not have.")

func (noCandidates) List(context.Context) ([]CandidateSummary, error) { return nil, nil }
func (noCandidates) Get(context.Context, string) (Candidate, error) {
	return Candidate{}, errNoCandidates
}
func (noCandidates) Admit(context.Context, string, string, []string) error { return errNoCandidates }
func (noCandidates) Reject(context.Context, string) error                  { return errNoCandidates }
