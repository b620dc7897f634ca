package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/egress/ledger"
	"github.com/coagent8/coagent8/internal/evidence"
	"github.com/coagent8/coagent8/internal/store"
)

// TestAuditShowsOnlyDigests: after a gate grant (which records an event
// with grant and job ids), `audit` lists the event with its identifiers
// as EvidenceDigest@1 and never the raw ids.
func TestAuditShowsOnlyDigests(t *testing.T) {
	env := declaredEnv(t, "env:REAL_KEY")
	code, _, errs := runGate(t, env, "grant", "--provider", "anthropic", "--model", "claude-sonnet-4-5",
		"--job", "job-audit-canary", "--secret", "env:REAL_KEY", "--max-requests", "3", "--max-tokens", "100000",
		"--output-ceiling", "4096", "--max-usd", "2", "--price-input", "3", "--price-output", "15")
	if code != ExitOK {
		t.Fatalf("grant: %d %s", code, errs)
	}
	var out, errb bytes.Buffer
	code = MainEnv(context.Background(), []string{"audit"}, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, env)
	if code != ExitOK {
		t.Fatalf("audit: exit %d: %s", code, errb.String())
	}
	got := out.String()
	if strings.Contains(got, "job-audit-canary") {
		t.Errorf("raw job id exported:\n%s", got)
	}
	if !strings.Contains(got, `"kind":"event"`) || !strings.Contains(got, `"job":"ed1:e1:`) {
		t.Errorf("no digested event:\n%s", got)
	}
}

// TestAuditDecisionLines: a decision line carries kind, the decision's
// time and the decision, and no empty event fields.
func TestAuditDecisionLines(t *testing.T) {
	dir := t.TempDir()
	env := config.FromList([]string{"COAGENT8_DIR=" + dir, "HOME=" + t.TempDir()})
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	appendDecision(t, dir, ledger.Record{Time: at, Purpose: "provider-request", Effect: "deny",
		Reason: "capacity.exhausted", Bytes: 42, Evidence: "ed1:e1:x"})
	code, out, errs := runCLI(t, env, "", "audit")
	if code != ExitOK || errs != "" {
		t.Fatalf("audit: exit %d, stderr %q", code, errs)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	want := map[string]any{"kind": "decision", "time": "2026-01-02T03:04:05Z", "decision": map[string]any{
		"time": "2026-01-02T03:04:05Z", "purpose": "provider-request", "effect": "deny",
		"reason": "capacity.exhausted", "bytes": 42.0, "evidence": "ed1:e1:x"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decision line (-want +got)\n%s", diff)
	}
}

func appendDecision(t *testing.T, dir string, r ledger.Record) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dir, "state.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	led, err := ledger.Open(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := led.Append(ctx, r); err != nil {
		t.Fatal(err)
	}
}

// TestAuditEmptyAndLimit: an empty audit says so on stderr and exits 0;
// a negative --limit is a usage error; --limit 0 lists nothing, quietly.
func TestAuditEmptyAndLimit(t *testing.T) {
	dir := t.TempDir()
	env := config.FromList([]string{"COAGENT8_DIR=" + dir, "HOME=" + t.TempDir()})
	tests := []struct {
		args       []string
		code       int
		stdout     string
		stderrHead string
	}{
		{[]string{"audit"}, ExitOK, "", "coagent8: no security events or decisions recorded in " + dir + "\n"},
		{[]string{"audit", "--limit", "-1"}, ExitUsage, "", "coagent8: error [INVALID_INPUT] --limit -1: use 0 or more (reason: flag.invalid)\n"},
		{[]string{"audit", "--limit", "0"}, ExitOK, "", ""},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(t, env, "", tt.args...)
		if code != tt.code || out != tt.stdout || !strings.HasPrefix(errs, tt.stderrHead) || (tt.stderrHead == "" && errs != "") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, %q, %q", tt.args, code, out, errs, tt.code, tt.stdout, tt.stderrHead)
		}
	}
}

// TestMessagesShowHomeAsTilde: the CLI's own messages name a path under
// the home directory as "~/…", as its errors do (the diagnostic
// redaction); a path elsewhere is named as it is.
func TestMessagesShowHomeAsTilde(t *testing.T) {
	elsewhere := t.TempDir()
	tests := []struct {
		name   string
		env    []string
		args   []string
		stream string // "stdout" or "stderr"
		want   string // the stream's first line
	}{
		{"empty audit", nil, []string{"audit"}, "stderr",
			"coagent8: no security events or decisions recorded in " + filepath.Join("~", ".coagent8")},
		{"empty audit outside home", []string{"COAGENT8_DIR=" + elsewhere}, []string{"audit"}, "stderr",
			"coagent8: no security events or decisions recorded in " + elsewhere},
		{"governance rule", nil, []string{"governance", "allow", "claude-sonnet-5-5"}, "stdout",
			filepath.Join("~", ".coagent8", "config.json") + ": governance.models.allow now lists claude-sonnet-5-5: it runs without asking."},
		{"governance show", nil, []string{"governance", "show"}, "stdout",
			"Configuration: " + filepath.Join("~", ".coagent8", "config.json") + " (does not exist; the defaults apply)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			env := config.FromList(append([]string{"HOME=" + home}, tt.env...))
			code, out, errs := runCLI(t, env, "", tt.args...)
			text := map[string]string{"stdout": out, "stderr": errs}[tt.stream]
			got := []any{code, strings.SplitN(text, "\n", 2)[0]}
			if d := cmp.Diff([]any{ExitOK, tt.want}, got); d != "" {
				t.Errorf("%v (-want +got):\n%s", tt.args, d)
			}
			if strings.Contains(out+errs, home) {
				t.Errorf("the home directory %s is named:\nstdout %q\nstderr %q", home, out, errs)
			}
		})
	}
}

// TestAuditNegativeLimitWithEvents: a negative limit used to panic once
// there were events; it is refused before anything is read.
func TestAuditNegativeLimitWithEvents(t *testing.T) {
	env := declaredEnv(t, "env:REAL_KEY")
	if code, _, errs := runGate(t, env, "grant", "--provider", "anthropic", "--model", "claude-sonnet-4-5",
		"--job", "j", "--secret", "env:REAL_KEY", "--max-requests", "1", "--max-tokens", "1000",
		"--output-ceiling", "1000", "--max-usd", "2", "--price-input", "3", "--price-output", "15"); code != ExitOK {
		t.Fatalf("grant: %d %s", code, errs)
	}
	if code, out, _ := runCLI(t, env, "", "audit", "--limit", "-1"); code != ExitUsage || out != "" {
		t.Errorf("exit %d, stdout %q; want %d and nothing", code, out, ExitUsage)
	}
}

// TestAuditKeepsValues: an event's exit status and suppressed count are
// values, not identifiers, and audit shows them as they are (digested,
// a sandbox run's exit and a flood's size were unreadable); a value of
// another form under those names, and every identifier, is digested.
func TestAuditKeepsValues(t *testing.T) {
	key, err := evidence.LoadKey(filepath.Join(t.TempDir(), "evidence.key"))
	if err != nil {
		t.Fatal(err)
	}
	got := digestIDs(map[string]string{"exit_code": "-1", "exit_class": "exited", "suppressed": "200", "job": "job-1",
		"exit_code_x": "0", "suppressed_": "1"}, key)
	for k, want := range map[string]string{"exit_code": "-1", "exit_class": "exited", "suppressed": "200"} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	for _, k := range []string{"job", "exit_code_x", "suppressed_"} {
		if !strings.HasPrefix(got[k], "ed1:") {
			t.Errorf("%s = %q, want a digest", k, got[k])
		}
	}
	if v := digestIDs(map[string]string{"exit_code": "Job-With-Caps"}, key)["exit_code"]; !strings.HasPrefix(v, "ed1:") {
		t.Errorf("exit_code of a non-value form = %q, want a digest", v)
	}
}
