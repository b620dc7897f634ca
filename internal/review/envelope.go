package review

// Verdict is a review verdict.
type Verdict string

// Verdicts (contract.md §2, §3).
const (
	Ready         Verdict = "READY"
	Blocked       Verdict = "BLOCKED"
	NotApplicable Verdict = "NOT_APPLICABLE"
)

// Severity is a finding's priority: P1 and P2 block, P3 does not.
type Severity string

// Severities of the State Envelope.
const (
	P1 Severity = "P1"
	P2 Severity = "P2"
	P3 Severity = "P3"
)

// Blocks reports whether a finding of this severity forces BLOCKED.
func (s Severity) Blocks() bool { return s == P1 || s == P2 }

// Coverage values of the COVERAGE header.
const (
	CoverageComplete = "COMPLETE"
	CoveragePartial  = "PARTIAL"
)

// Finding is one review finding. Line is 1-based; 0 means the model gave
// none. Confidence is nil when the model gave none (never invented).
type Finding struct {
	Severity   Severity `json:"severity"`
	Title      string   `json:"title"`
	File       string   `json:"file"`
	Line       int      `json:"line,omitempty"`
	LineEnd    int      `json:"line_end,omitempty"`
	Problem    string   `json:"problem"`
	Evidence   string   `json:"evidence"`
	Fix        string   `json:"fix"`
	Confidence *float64 `json:"confidence,omitempty"`
}

// Checks is the CHECKS header: typecheck PASS|FAIL|NOT_RUN and tests
// PASS|FAIL|NOT_RUN; "" when the model did not say.
type Checks struct {
	Typecheck string `json:"typecheck"`
	Tests     string `json:"tests"`
}

// Envelope is the structured State Envelope (the model's own claims; the
// gated verdict is in [Result]).
type Envelope struct {
	Review    string    `json:"review"`
	Snapshot  string    `json:"snapshot"`
	Coverage  string    `json:"coverage"`
	Verdict   Verdict   `json:"verdict"`
	Summary   string    `json:"summary"`
	Findings  []Finding `json:"findings"`
	Checks    Checks    `json:"checks"`
	NextSteps []string  `json:"next_steps"`
}

// Result is the gated review outcome.
type Result struct {
	// Verdict is READY or BLOCKED after the gate.
	Verdict Verdict `json:"verdict"`
	// Reason is set when Verdict is BLOCKED: one of the Reason* constants or
	// an execution error's public message.
	Reason string `json:"reason,omitempty"`
	// Text is the answer with the first VERDICT line rewritten (or a VERDICT
	// line appended) when blocked; unchanged when READY.
	Text string `json:"-"`
	// Envelope is what the model reported, parsed from the answer.
	Envelope Envelope `json:"envelope"`
	// Truncated reports whether the answer was cut.
	Truncated bool `json:"truncated"`
}

// Reasons for BLOCKED, in the contract's order of precedence (§3).
const (
	ReasonBlocker    = "Blocker issue [P1/P2] reported"
	ReasonPartial    = "Review coverage is partial"
	ReasonTruncated  = "Output was truncated"
	ReasonIncomplete = "Incomplete State Envelope"
	ReasonNotReady   = "Review requirements not satisfied"
)
