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
	// The user's own --env credential is dropped, and they are told so
	// before the command runs (not only in the receipt's env_removed).
	if !strings.Contains(errs, "coagent8: sandbox: --env OPENAI_API_KEY not passed: credential names never reach the sandbox") || strings.Contains(errs, key) {
		t.Errorf("stderr does not say --env OPENAI_API_KEY was dropped (or shows its value): %q", errs)
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
	// A host without the ia32 entry qualifies and says so (issue 14); one
	// with it shows the probe contained. The record decides which.
	// The name column is as wide as the longest probe name.
	q := qualificationRecord(t, env.Get("COAGENT8_DIR"))
	width := 0
	for _, p := range q.Probes {
		width = max(width, len(p.Name))
	}
	for _, p := range q.Probes {
		if p.Name != "ia32" && p.Name != "x32" {
			continue
		}
		line := "  " + p.Name + strings.Repeat(" ", width-len(p.Name)) + " "
		word := map[bool]string{true: "absent (host)", false: "contained"}[p.HostLacks != ""]
		noted := p.HostLacks == "" || strings.Contains(out, "note: this host has no "+p.HostLacks)
		if !strings.Contains(out, line+word) || !noted {
			t.Errorf("%s: record host_lacks %q, table lacks %q or the note:\n%s", p.Name, p.HostLacks, word, out)
		}
	}
}

// qualificationRecord reads the one qualification record of a state
// directory.
func qualificationRecord(t *testing.T, dir string) sandbox.Qualification {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "sandbox", "qualification-*.json"))
	if len(files) != 1 {
		t.Fatalf("qualification records %v", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var q sandbox.Qualification
	if err := json.Unmarshal(b, &q); err != nil {
		t.Fatal(err)
	}
	return q
}

// TestSandboxRunExitStatus: `sandbox run` exits with its command's status,
// 128+N for signal N, 124 on --timeout (coreutils timeout), and says so in
// one line; bad paths are usage errors naming the flag and the path.
func TestSandboxRunExitStatus(t *testing.T) {
	sh, err := filepath.EvalSymlinks("/bin/sh") // the sandbox wants canonical paths
	if err != nil {
		t.Fatal(err)
	}
	env := config.FromList([]string{"COAGENT8_DIR=" + t.TempDir(), "HOME=" + t.TempDir()})
	tests := []struct {
		name string
		args []string
		code int
		last string // last stderr line
	}{
		{"success", []string{"--", "/usr/bin/true"}, ExitOK, ""},
		{"status 7", []string{"--", sh, "-c", "exit 7"}, 7, "coagent8: sandboxed command exited with status 7"},
		{"status 1", []string{"--", "/usr/bin/false"}, 1, "coagent8: sandboxed command exited with status 1"},
		{"SIGTERM", []string{"--", sh, "-c", "kill -TERM $$"}, 128 + 15, "coagent8: sandboxed command was killed by SIGTERM"},
		{"timeout", []string{"--timeout", "300ms", "--", sh, "-c", "sleep 10"}, 124, "coagent8: sandboxed command timed out after 300ms (--timeout)"},
		{"output limit", []string{"--output-mb", "1", "--", "/usr/bin/yes"}, 128 + 9,
			"coagent8: sandboxed command wrote more than 1 MiB of output (--output-mb) and was stopped"},
		{"missing input", []string{"--input", "/nonexistent-c8", "--", "/usr/bin/true"}, ExitUsage, "Run 'coagent8 sandbox run --help' for usage."},
	}
	if code, out, errs := runSandboxCLI(t, env, "qualify"); code != ExitOK { // no qualifying notice in the cases
		t.Fatalf("qualify: exit %d\n%s\n%s", code, out, errs)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := runSandboxCLI(t, env, append([]string{"run", "--quiet"}, tt.args...)...)
			lines := strings.Split(strings.TrimRight(errs, "\n"), "\n")
			if code != tt.code || lines[len(lines)-1] != tt.last {
				t.Errorf("exit %d, stderr %q; want exit %d, last line %q", code, errs, tt.code, tt.last)
			}
		})
	}
	_, _, errs := runSandboxCLI(t, env, "run", "--input", "/nonexistent-c8", "--", "/usr/bin/true")
	if !strings.HasPrefix(errs, `coagent8: error [INVALID_INPUT] --input "/nonexistent-c8": no such file or directory (reason: sandbox.path)`) {
		t.Errorf("missing --input: stderr %q; want the flag and the path named", errs)
	}
}
