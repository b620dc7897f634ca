package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/sandbox"
)

// TestMain lets the test binary act as the sandbox helper and probe
// (re-exec), as cmd/coagent8 does.
func TestMain(m *testing.M) {
	sandbox.MaybeRunChild()
	os.Exit(m.Run())
}

func runSandboxCLI(t *testing.T, env config.Env, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := MainEnv(context.Background(), append([]string{"sandbox"}, args...), Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, env)
	return code, out.String(), errb.String()
}

// TestSandboxRunQualifiesThenRuns covers the CLI path: the first run
// auto-qualifies (notice on stderr) and stores the record; the next run
// reuses it; the receipt is JSON; host credentials never reach the child.
func TestSandboxRunQualifiesThenRuns(t *testing.T) {
	state := t.TempDir()
	key := "sk-ant-" + strings.Repeat("B", 30)
	env := config.FromList([]string{"COAGENT8_DIR=" + state, "HOME=" + t.TempDir(), "ANTHROPIC_API_KEY=" + key})
	rec := filepath.Join(t.TempDir(), "receipt.json")
	code, out, errs := runSandboxCLI(t, env, "run", "--receipt", rec, "--env", "OPENAI_API_KEY="+key, "--", "/usr/bin/env")
	if code != ExitOK {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "qualifying now") {
		t.Errorf("first run did not say it qualifies: %q", errs)
	}
	if strings.Contains(out, key) || strings.Contains(out, "API_KEY") {
		t.Errorf("credential reached the child env: %q", out)
	}
	var r sandbox.Receipt
	b, _ := os.ReadFile(rec)
	if err := json.Unmarshal(b, &r); err != nil || r.Exit.Class != sandbox.ExitExited || r.BinaryDigest == "" {
		t.Fatalf("receipt %s: %v", b, err)
	}
	matches, _ := filepath.Glob(filepath.Join(state, "sandbox", "qualification-*.json"))
	if len(matches) != 1 {
		t.Fatalf("qualification records: %v", matches)
	}
	events, _ := os.ReadFile(filepath.Join(state, "events.jsonl"))
	for _, want := range []string{`"sandbox.qualified"`, `"sandbox.admitted"`, `"sandbox.run.exited"`, r.JobID} {
		if !strings.Contains(string(events), want) {
			t.Errorf("security events lack %s:\n%s", want, events)
		}
	}
	code, _, errs = runSandboxCLI(t, env, "run", "--quiet", "--", "/usr/bin/false")
	if code != ExitFailure || strings.Contains(errs, "qualifying now") {
		t.Errorf("second run: exit %d, stderr %q", code, errs)
	}
}

func TestSandboxRunRefusesBadCommand(t *testing.T) {
	env := config.FromList([]string{"COAGENT8_DIR=" + t.TempDir(), "HOME=" + t.TempDir()})
	for _, args := range [][]string{{"--", "true"}, {"--", "/usr/bin/../bin/true"}, {"/usr/bin/true"}} {
		if code, _, errs := runSandboxCLI(t, env, append([]string{"run"}, args...)...); code != ExitUsage {
			t.Errorf("run %q: exit %d (%s), want %d", args, code, errs, ExitUsage)
		}
	}
}

func TestSandboxQualifyPrintsProbes(t *testing.T) {
	env := config.FromList([]string{"COAGENT8_DIR=" + t.TempDir(), "HOME=" + t.TempDir()})
	code, out, errs := runSandboxCLI(t, env, "qualify")
	if code != ExitOK || !strings.Contains(out, "qualified") || !strings.Contains(out, "ia32") {
		t.Fatalf("qualify: exit %d\n%s\n%s", code, out, errs)
	}
}
