package turn

// Outcome is the execution result returned as MCP structuredContent
// (contract.md §2). Every string in it has been redacted.
type Outcome struct {
	SchemaVersion         int      `json:"schemaVersion"`
	Provider              *string  `json:"provider"`
	Status                Status   `json:"status"`
	Output                string   `json:"output"`
	SessionHandle         *string  `json:"sessionHandle"`
	ContinuationAvailable bool     `json:"continuationAvailable"`
	Truncated             bool     `json:"truncated"`
	Activity              Activity `json:"activity"`
	HistoryAvailable      bool     `json:"historyAvailable"`
	Verdict               string   `json:"verdict"`
	Model                 string   `json:"model,omitempty"`
	ModelRequested        string   `json:"modelRequested,omitempty"`
	ModelUsed             string   `json:"modelUsed,omitempty"`
	Turn                  int      `json:"turn,omitempty"`
	Reason                string   `json:"reason,omitempty"`
	Verification          string   `json:"verification,omitempty"`
	// Containment is what confined the CLI of a completed turn: "kernel"
	// (the sandbox's read profile behind the provider gate) or "profile"
	// (the CLI's own verified read-only profile; issue 15 scope 8).
	Containment string `json:"containment,omitempty" jsonschema:"kernel (the CLI ran in coagent8's kernel sandbox, read-only workspace, the provider gate as its only network) or profile (the CLI's own verified read-only profile)"`
	// ContainmentReason says why that containment applied.
	ContainmentReason string   `json:"containmentReason,omitempty"`
	Warnings          []string `json:"warnings,omitempty"`
	Error             *Error   `json:"error,omitempty"`
}

// Status is the turn's end state.
type Status string

// Statuses (contract.md §2).
const (
	Completed Status = "completed"
	Failed    Status = "failed"
	Cancelled Status = "cancelled"
	TimedOut  Status = "timed_out"
	Running   Status = "running"
)

// Activity summarises what the backend did.
type Activity struct {
	ToolCount  int   `json:"toolCount"`
	DurationMs int64 `json:"durationMs"`
}

// Error is the public form of a failure.
type Error struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
	Reason    string `json:"reason,omitempty"`
}

// Verdicts (contract.md §3).
const (
	VerdictNotApplicable = "NOT_APPLICABLE"
	VerdictReady         = "READY"
	VerdictBlocked       = "BLOCKED"
)
