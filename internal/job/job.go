package job

import (
	"time"

	"github.com/coagent8/coagent8/internal/quarantine"
	"github.com/coagent8/coagent8/internal/verify"
)

// Budget is the ceiling the user approved for a job; zero fields are not
// allowed by the delegate surface, the store keeps what it is given.
type Budget struct {
	MaxUSD      float64 `json:"max_usd"`
	MaxRequests int     `json:"max_requests"`
	MaxMinutes  int     `json:"max_minutes"`
}

// Spec is what a delegate job is created with.
type Spec struct {
	// Workspace is the absolute top level of the user's Git work tree.
	Workspace string
	// Base is the commit id the candidate starts from.
	Base string
	// Backend and Model are the concrete backend and approved model id.
	Backend, Model string
	Budget         Budget
	// TTL is how long a candidate stays admissible after the job starts
	// (0 = [DefaultTTL]).
	TTL time.Duration
}

// DefaultTTL is how long a job's candidate is admissible.
const DefaultTTL = 7 * 24 * time.Hour

// Candidate is a job's quarantined result: the patch and findings from
// [quarantine.Build] and the agent's final message (untrusted bytes).
type Candidate struct {
	Patch    []byte
	Digest   string
	Findings []quarantine.Finding
	Message  []byte
	// Verification is the user's checks run on the candidate in the
	// verify profile before it was attached; nil for a job stored
	// before checks were recorded.
	Verification *Verification
	// Taint, when set, is the reason a containment event during the job
	// taints the candidate (e.g. "gate.revoked"): [Store.Attach] ends the
	// job tainted in the same write, so it is never admissible unacknowledged.
	// Write-only: it is the job's Reason once stored.
	Taint string
}

// Job is one stored job.
type Job struct {
	ID string
	Spec
	State  State
	Reason string
	// SupervisorPID and SupervisorStart identify the process that runs
	// the job (start time in clock ticks since boot).
	SupervisorPID             int
	SupervisorStart           int64
	Created, Updated, Expires time.Time
	Candidate                 *Candidate // nil until attached
	AdmittedBy                string
	AdmittedDigest            string
	Admitted                  time.Time
}

// SupervisorGone reports whether the process that supervised j has ended
// (its pid gone or now another process's; Linux /proc start time). A job
// can end while its supervisor still works on it — quarantined while it
// runs, its candidate read afterwards — so only then is what the job left
// on disk nobody's. Where the start time cannot be read it reports true,
// as [Open] does (no delegate job runs there).
func (j Job) SupervisorGone() bool { return !alive(j.SupervisorPID, j.SupervisorStart) }

// Verification is what the user's configured checks (verify.commands)
// reported on a candidate: each check's real exit status, bounded
// redacted output tails (untrusted bytes: the check ran the agent's
// code) and receipt, or, when none ran, Note saying why (e.g. "no checks
// configured"). A failing check does not fail the job.
type Verification struct {
	Note   string         `json:"note,omitempty"`
	Checks []verify.Check `json:"checks"`
}
