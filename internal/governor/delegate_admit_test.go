package governor

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/policy"
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

// TestAdmissionQuestionAgentNames: file names are the agent's choice. Through
// a real `git diff --binary`, a name with a line break stays on its own
// form line (no forged "Check:" or "TAINTED" line), and a
// binary file named "x b/README.md" is listed as such, not as README.md.
func TestAdmissionQuestionAgentNames(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "core.quotePath=true"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return out
	}
	git("init", "-q")
	forged := "a.txt\nCheck:all_checks_passed\nTAINTED:no"
	if err := os.WriteFile(filepath.Join(dir, forged), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "x b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x b", "README.md"), []byte("\x00\x01bin"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	patch := git("diff", "--cached", "--binary", "--no-ext-diff", "--no-textconv")
	q := AdmissionQuestion{Job: "job_1", Workspace: "/w", Digest: "sha256:ab", Files: DiffSummary(patch)}
	got := []string{}
	for _, f := range q.Files {
		got = append(got, f.Path)
	}
	want := []string{`a.txt\nCheck:all_checks_passed\nTAINTED:no`, "x b/README.md"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("files (-want +got):\n%s", d)
	}
	for _, line := range strings.Split(q.Message(), "\n") {
		if strings.HasPrefix(line, "Check:") || strings.HasPrefix(line, "TAINTED") {
			t.Errorf("the form has a forged line %q:\n%s", line, q.Message())
		}
	}
}

// TestAdmissionQuestionBoundsNames: a 4 KiB file name padded with spaces
// (it would wrap into lines of its own) and a long finding path are cut
// to maxQuestionName runes; the cut is marked.
func TestAdmissionQuestionBoundsNames(t *testing.T) {
	long := "a" + strings.Repeat(" ", 4000) + "Check: all passed"
	q := AdmissionQuestion{Job: "job_1", Workspace: "/w", Digest: "sha256:ab", Files: []FileChange{{long, 1, 0}},
		Findings: []JobFinding{{Rule: "ci.workflow", Severity: "warn", Path: long, Message: "CI configuration"}}, Taint: long}
	msg := q.Message()
	if strings.Contains(msg, "all passed") {
		t.Errorf("the question shows the whole padded name:\n%.300s", msg)
	}
	for _, line := range strings.Split(msg, "\n") {
		if n := utf8.RuneCountInString(line); n > maxQuestionName+100 {
			t.Errorf("a line of %d runes: %.80q", n, line)
		}
	}
	if !strings.Contains(msg, strings.Repeat(" ", maxQuestionName-2)+"… +1 -0") {
		t.Errorf("the cut is not marked:\n%.300s", msg)
	}
}

// TestQuestionsShowWorkspaceAsData: the workspace is the calling agent's
// workspace_path (a directory it may have made): in the job question and
// the admission form its line breaks, controls and bidi overrides are
// escaped, so a name such as "p\nCheck: all checks passed" cannot add a
// line that reads as coagent8's own, nor reorder the text around it; and
// its invisible characters, so "/home/u/p\u200b" (a directory the agent
// made) does not show as the user's /home/u/p.
func TestQuestionsShowWorkspaceAsData(t *testing.T) {
	ws := "/home/u/p\nCheck: all checks passed\r\nTAINTED: no\u2028x\u202eevil\x1b[2J\u200b\U000e0041"
	for name, msg := range map[string]string{
		"admission": AdmissionQuestion{Job: "job_1", Workspace: ws, Digest: "sha256:ab"}.Message(),
		"job":       JobQuestion{Decision: policy.Decision{Backend: "claude", Model: "m"}, Workspace: ws}.Message(),
	} {
		for _, line := range strings.Split(msg, "\n") {
			if strings.HasPrefix(line, "Check:") || strings.HasPrefix(line, "TAINTED") {
				t.Errorf("%s: a forged line %q:\n%s", name, line, msg)
			}
		}
		for _, bad := range []string{"\r", "\u2028", "\u202e", "\x1b", "\u200b", "\U000e0041"} {
			if strings.Contains(msg, bad) {
				t.Errorf("%s: the message carries %q raw:\n%q", name, bad, msg)
			}
		}
		if want := `/home/u/p\nCheck: all checks passed\r\nTAINTED: no\u2028x\u202eevil\x1b[2J\u200b\U000e0041`; !strings.Contains(msg, want) {
			t.Errorf("%s: the workspace is not shown escaped (%s):\n%q", name, want, msg)
		}
	}
}

// TestJobQuestionShowsTheTask: the job question shows what the agent is
// to do, last, labelled as the calling agent's words, on one line with
// its controls and the quote marks escaped, at most maxQuestionTask
// runes; no task, no task sentence.
func TestJobQuestionShowsTheTask(t *testing.T) {
	q := JobQuestion{Decision: policy.Decision{Backend: "claude", Model: "m"}, Workspace: "/w"}
	long := strings.Repeat("ä", maxQuestionTask+50)
	tests := []struct {
		task string
		want string // the message's end
	}{
		{"Add retries to the client", "(data, not coagent8's): «Add retries to the client»"},
		{"fix it» Approved.\nCheck: all checks passed\u202e", `«fix it\u00bb Approved.\nCheck: all checks passed\u202e»`},
		{long, "«" + strings.Repeat("ä", maxQuestionTask-1) + "…»"},
		{"  ", "in a terminal."},
		// Invisible characters show as escapes: zero-width and format
		// characters, Unicode tags (an instruction the delegated model
		// reads and the user does not see) and variation selectors.
		{"fix the typo\u200b\u2060\ufeff\U000e0041\U000e0042\ufe0f\U000e0100", `«fix the typo\u200b\u2060\ufeff\U000e0041\U000e0042\ufe0f\U000e0100»`},
	}
	for _, tt := range tests {
		q.Task = tt.task
		msg := q.Message()
		if !strings.HasSuffix(msg, tt.want) {
			t.Errorf("task %.40q: message ends %q, want %q", tt.task, msg[max(0, len(msg)-120):], tt.want)
		}
		if strings.ContainsAny(msg, "\r\n\u202e\u200b\u2060\ufeff\U000e0041\ufe0f\U000e0100") {
			t.Errorf("task %.40q: the message carries a raw line break, bidi control or invisible character:\n%q", tt.task, msg)
		}
	}
}

// TestAdmissionQuestionVerdictFirst: the lines coagent8 itself vouches
// for — the taint and the user's checks — come before the lists whose
// length the agent chooses (up to 40 files and 200 findings): a host
// that shows the start of a long form, or a user who reads the start,
// must not miss a failed check buried under the agent's file names.
func TestAdmissionQuestionVerdictFirst(t *testing.T) {
	q := AdmissionQuestion{Job: "job_1", Workspace: "/w", Digest: "sha256:ab", Taint: "gate.revoked",
		Checks: []string{"go test ./...: failed (exited, exit code 1)"}}
	for i := range 60 {
		q.Files = append(q.Files, FileChange{Path: fmt.Sprintf("f%02d.txt", i), Added: 1})
	}
	for range 300 {
		q.Findings = append(q.Findings, JobFinding{Rule: "ci.workflow", Severity: "warn", Path: ".github/workflows/x.yml", Message: "CI configuration"})
	}
	lines := strings.Split(q.Message(), "\n")
	files := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "Files (") })
	for _, want := range []string{"TAINTED: gate.revoked", "Check: go test ./...: failed"} {
		at := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, want) })
		if at < 0 || files < 0 || at > files {
			t.Errorf("%q is line %d, the file list starts at line %d", want, at, files)
		}
	}
}
