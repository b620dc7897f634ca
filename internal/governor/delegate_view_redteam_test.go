package governor

import (
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/quarantine"
)

// TestViewRedactsFindingPaths: a finding's path (the agent's file name)
// is outside the untrusted fence; a credential in it is redacted as in
// the fenced patch, and a bidi control is shown escaped.
func TestViewRedactsFindingPaths(t *testing.T) {
	tok := "ghp_" + strings.Repeat("Qw7", 12)
	j := job.Job{ID: "job_1", State: job.Tainted, Candidate: &job.Candidate{Patch: []byte("p"), Digest: "sha256:x",
		Findings: []quarantine.Finding{{Rule: quarantine.RuleCI, Severity: quarantine.Warn, Path: ".github/workflows/" + tok + "\u202e.yml"}}}}
	v := view(j, nil)
	if len(v.Findings) != 1 {
		t.Fatalf("findings = %+v", v.Findings)
	}
	if p := v.Findings[0].Path; strings.Contains(p, tok) || strings.Contains(p, "\u202e") || !strings.HasPrefix(p, ".github/workflows/") {
		t.Errorf("finding path outside the fence = %q", p)
	}
}
