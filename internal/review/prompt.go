package review

import (
	"context"
	"fmt"
	"strings"

	"github.com/coagent8/coagent8/internal/gitscope"
)

// DefaultInstructions are used when the caller gives none (contract.md §1).
const DefaultInstructions = "Review correctness, security, edge cases and architecture."

// Request is a prepared review turn.
type Request struct {
	// Prompt is the full prompt for the backend's stdin.
	Prompt string
	// Snapshot is the collected scope; Snapshot.Commit is the sha the
	// envelope's SNAPSHOT should name.
	Snapshot gitscope.Snapshot
	// Schema is [Schema], for backends that enforce structured output.
	Schema map[string]any
}

// Prepare collects the Git scope of o ([gitscope.Collect]) and builds the
// review prompt for review turn number turn (1-based). Errors are those of
// gitscope.Collect (*fault.Error).
func Prepare(ctx context.Context, o gitscope.Options, instructions string, turn int) (Request, error) {
	snap, err := gitscope.Collect(ctx, o)
	if err != nil {
		return Request{}, err
	}
	return Request{Prompt: Prompt(snap, instructions, turn), Snapshot: snap, Schema: Schema()}, nil
}

// Prompt returns the review prompt: the task header, the instructions, the
// State Envelope the answer must end with, and the snapshot. An empty
// instructions string means [DefaultInstructions].
func Prompt(s gitscope.Snapshot, instructions string, turn int) string {
	if strings.TrimSpace(instructions) == "" {
		instructions = DefaultInstructions
	}
	var b strings.Builder
	b.WriteString("[TASK: CODE REVIEW & AUDIT]\n\n")
	fmt.Fprintf(&b, "INSTRUCTIONS:\n%s\n\n", strings.TrimSpace(instructions))
	fmt.Fprintf(&b, "SCOPE: %s\n", s.Description)
	if s.Incomplete {
		b.WriteString("NOTE: the snapshot below was cut at a size limit; report COVERAGE: PARTIAL unless you read the rest from the workspace.\n")
	}
	b.WriteString("\n")
	b.WriteString(envelopeRequest(snapshotID(s), turn))
	b.WriteString("\nGIT SNAPSHOT:\n")
	b.WriteString(s.Text)
	b.WriteString("\n")
	return b.String()
}

func snapshotID(s gitscope.Snapshot) string {
	if s.Commit == "" {
		return "NO_COMMIT"
	}
	return s.Commit
}

// envelopeRequest is the requested State Envelope (contract.md §3).
func envelopeRequest(sha string, turn int) string {
	return fmt.Sprintf(`You are reviewing read-only: do not modify any file. End your answer with
exactly this State Envelope, each header at the start of its own line, once:

REVIEW: %d
SNAPSHOT: %s
COVERAGE: COMPLETE | PARTIAL
VERDICT: READY | BLOCKED
SUMMARY: <one line>
[P1|P2|P3] <file>:<line> <short title>
Problem: <what is wrong>
Evidence: <code or behaviour that shows it>
Fix: <the change to make>
CHECKS: typecheck=<PASS|FAIL|NOT_RUN>; tests=<PASS|FAIL|NOT_RUN>
END_REVIEW

Rules: one finding block per issue (P1 = must fix, breaks correctness or
security; P2 = should fix before merge; P3 = minor). Any P1 or P2 finding
means VERDICT: BLOCKED. COVERAGE is PARTIAL if you did not review every
change in scope. END_REVIEW is the last line. If a JSON output schema is
enforced, give the same fields in it instead.
`, turn, sha)
}
