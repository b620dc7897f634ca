package governor_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/governor"
	"github.com/coagent8/coagent8/internal/turn"
)

// gitRepo returns a work tree with one commit and an uncommitted change,
// and its HEAD commit.
func gitRepo(t *testing.T) (dir, head string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is not installed (scripts/install.sh installs it):", err)
	}
	dir = t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run("add", "a.go")
	run("commit", "-q", "-m", "one")
	if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n\nvar X = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, run("rev-parse", "HEAD")
}

func envelope(head, verdict string) string {
	return "REVIEW: 1\nSNAPSHOT: " + head + "\nCOVERAGE: COMPLETE\nVERDICT: " + verdict +
		"\nSUMMARY: s\nCHECKS: typecheck=PASS; tests=NOT_RUN\nEND_REVIEW"
}

// TestReview: a review takes the governed path (a denied or refused model
// never runs and is BLOCKED with the refusal's message), its answer is
// gated, and run_checks cannot conjure checks that are not configured.
func TestReview(t *testing.T) {
	ws, head := gitRepo(t)
	yes := true
	tests := []struct {
		name      string
		cfg       string
		workspace string // "plain": a directory that is not a work tree
		model     string
		consent   governor.Consent
		checks    *bool
		wantRan   []string
		want      string // "verdict code reason"
		warnings  []string
		pending   bool
		scoped    bool
	}{
		{name: "allowed and ready", cfg: allowM, model: "m-ok", wantRan: []string{"m-ok"}, want: "READY  ", scoped: true},
		{name: "denied is blocked before the backend", cfg: denyM, model: "m-bad",
			want: "BLOCKED POLICY_DENIED governance.deny", scoped: true},
		{name: "pending consent reviews nothing", cfg: askM, model: "m-ask",
			consent: &fakeConsent{answer: governor.Answer{Pending: true}}, want: "  ", pending: true},
		{name: "not a work tree is blocked", cfg: allowM, model: "m-ok", workspace: "plain",
			want: "BLOCKED INVALID_INPUT git.not_a_work_tree"},
		{name: "run_checks with none configured warns", cfg: allowM, model: "m-ok", checks: &yes,
			wantRan: []string{"m-ok"}, want: "READY  ", scoped: true,
			warnings: []string{"run_checks is true but no checks are configured (verify.commands in the coagent8 configuration)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := config.FromList([]string{"HOME=/home/u", "PATH=" + os.Getenv("PATH")})
			r := newRigEnv(t, tt.cfg, &fakeBackend{text: envelope(head, "READY")}, env)
			c := tt.consent
			if c == nil {
				c = &fakeConsent{}
			}
			w := ws
			if tt.workspace == "plain" {
				w = t.TempDir()
			}
			res := r.gov.Review(context.Background(), governor.ReviewTurn{RunChecks: tt.checks, Number: 1,
				Turn: governor.Turn{Consent: c, Request: turn.Request{Backend: "claude", Workspace: w, Model: tt.model, SessionMode: "none"}}})
			o := res.Outcome
			code, reason := "", ""
			if o.Error != nil {
				code, reason = o.Error.Code, o.Error.Reason
			}
			got := []any{r.claude.ran(), o.Verdict + " " + code + " " + reason, o.Warnings, res.Pending, o.Review.Scope != nil}
			want := []any{tt.wantRan, tt.want, tt.warnings, tt.pending, tt.scoped}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("Review (-want +got):\n%s", d)
			}
		})
	}
}
