package governor

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDiffSummary: files in patch order with added/removed lines; an added
// line "++ b/x" inside a hunk is counted, not a header; a deletion keeps
// its old name; a mode-only change and a quoted name are listed; a
// credential in a path is redacted, a bidi control escaped.
func TestDiffSummary(t *testing.T) {
	tok := "ghp_" + strings.Repeat("Kp4", 12)
	patch := strings.Join([]string{
		"diff --git a/main.txt b/main.txt", "index 1..2 100644", "--- a/main.txt", "+++ b/main.txt",
		"@@ -1,2 +1,3 @@", " keep", "-old", "+new", "+++ b/hidden",
		"diff --git a/gone.txt b/gone.txt", "deleted file mode 100644", "--- a/gone.txt", "+++ /dev/null",
		"@@ -1 +0,0 @@", "-bye",
		"diff --git a/run.sh b/run.sh", "old mode 100644", "new mode 100755",
		`diff --git "a/t\tab" "b/t\tab"`, "new file mode 100644", "--- /dev/null", `+++ "b/t\tab"`, "@@ -0,0 +1 @@", "+x",
		"diff --git a/" + tok + "\u202e b/" + tok + "\u202e", "new file mode 100644", "--- /dev/null", "+++ b/" + tok + "\u202e", "@@ -0,0 +1 @@", "+y",
		"",
	}, "\n")
	got := DiffSummary([]byte(patch))
	if len(got) != 5 {
		t.Fatalf("files = %+v", got)
	}
	want := []FileChange{{"main.txt", 2, 1}, {"gone.txt", 0, 1}, {"run.sh", 0, 0}, {"t\tab", 1, 0}}
	if d := cmp.Diff(want, got[:4]); d != "" {
		t.Errorf("summary (-want +got):\n%s", d)
	}
	if last := got[4]; strings.Contains(last.Path, tok) || strings.Contains(last.Path, "\u202e") || last.Added != 1 {
		t.Errorf("last file = %+v, want redacted, escaped, +1", last)
	}
}

// TestAdmissionQuestionMessage: the question names job, workspace,
// digest, totals, each file, each finding and the taint reason.
func TestAdmissionQuestionMessage(t *testing.T) {
	q := AdmissionQuestion{Job: "job_1", Workspace: "/w", Digest: "sha256:ab", Taint: "gate.revoked", Checks: []string{"go test ./...: failed (exited, exit code 1)"},
		Files:    []FileChange{{"a.txt", 3, 1}, {"b.txt", 0, 2}},
		Findings: []JobFinding{{Rule: "ci.workflow", Severity: "warn", Path: ".github/workflows/x.yml", Message: "CI configuration"}}}
	msg := q.Message()
	for _, want := range []string{"job_1", "/w", "sha256:ab", "Files (2, +3 -3)", "a.txt +3 -1", "b.txt +0 -2",
		"Scan findings (1)", "[warn] ci.workflow .github/workflows/x.yml: CI configuration", "TAINTED: gate.revoked", "Check: go test ./...: failed (exited, exit code 1)", "approve: true"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}
