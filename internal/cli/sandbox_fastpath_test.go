//go:build linux && amd64

package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/sandboxrun"
)

// TestSandboxRunFastPathMatchesCLI runs each argv through the `sandbox run`
// fast path (sandboxrun.Fast, which cmd/coagent8 calls from an initialiser)
// and through the full command line: the fast path either declines having
// done nothing (no output, no security event) or gives the same exit
// status, stdout and stderr as the command line. Whether it may decline is
// its own business, except that a well-formed run must take it.
func TestSandboxRunFastPathMatchesCLI(t *testing.T) {
	state := t.TempDir()
	t.Setenv("COAGENT8_DIR", state)
	t.Setenv("HOME", t.TempDir())
	key := "sk-proj-" + strings.Repeat("Q", 32) // synthetic
	t.Setenv("OPENAI_API_KEY", key)
	cli := func(args []string) (int, string, string) {
		var out, errb bytes.Buffer
		code := MainEnv(context.Background(), args, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, config.FromOS())
		return code, out.String(), errb.String()
	}
	if code, _, errs := cli([]string{"sandbox", "run", "--quiet", "--", "/usr/bin/true"}); code != ExitOK { // qualifies
		t.Fatalf("warm-up: exit %d: %s", code, errs)
	}
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) []string { return append([]string{"sandbox", "run"}, args...) }
	for _, tt := range []struct {
		name string
		args []string
		fast bool // the fast path must take it (else it may decline)
	}{
		{"runs", run("--quiet", "--", "/usr/bin/echo", "hi", "--quiet", "--"), true},
		{"flag=value", run("--quiet=true", "--env=A=1", "--", "/usr/bin/printenv", "A"), true},
		{"command's status", run("--quiet", "--", "/usr/bin/false"), true},
		{"credentials stripped", run("--quiet", "--env", "OPENAI_API_KEY="+key, "--env", "B=2", "--", "/usr/bin/env"), true},
		{"refused path", run("--quiet", "--", "/usr/bin/../bin/true"), true},
		{"empty command", run("--quiet", "--", ""), true},
		{"zero timeout", run("--quiet", "--timeout", "0", "--", "/usr/bin/true"), true},
		{"negative memory", run("--quiet", "--memory-mb", "-1", "--", "/usr/bin/true"), true},
		{"relative dir", run("--quiet", "--dir", "../..", "--", "/usr/bin/pwd"), true},
		{"receipt", run("--receipt", filepath.Join(t.TempDir(), "r.json"), "--", "/usr/bin/true"), true},
		{"receipt not writable", run("--receipt", filepath.Join(notDir, "r.json"), "--", "/usr/bin/true"), false},
		{"help", run("--help", "--", "/usr/bin/true"), false},
		{"help=false", run("--help=false", "--quiet", "--", "/usr/bin/true"), false},
		{"shorthand", run("-h"), false},
		{"unknown flag", run("--bogus", "--", "/usr/bin/true"), false},
		{"bad value", run("--memory-mb", "lots", "--", "/usr/bin/true"), false},
		{"missing value", run("--receipt"), false},
		{"no --", run("/usr/bin/true"), false},
		{"argument before --", run("", "--", "/usr/bin/true"), false},
		{"only --", run("--"), false},
		{"no command", run(), false},
		{"missing command", run("--", "/nonexistent-c8/true"), false},
		{"relative command", run("--", "true"), false},
		{"missing input", run("--input", "/nonexistent-c8", "--", "/usr/bin/true"), false},
		{"missing ro", run("--ro", "nonexistent-c8", "--", "/usr/bin/true"), false},
		{"flag before run", []string{"sandbox", "--quiet", "run", "--", "/usr/bin/true"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			events := eventLogSize(t, state)
			var out, errb bytes.Buffer
			code, ok := sandboxrun.Fast(tt.args, &out, &errb)
			if tt.fast && !ok {
				t.Fatalf("Fast(%q) declined a well-formed run", tt.args)
			}
			if !ok {
				if out.Len()+errb.Len() != 0 || eventLogSize(t, state) != events {
					t.Fatalf("declined Fast(%q) did something: stdout %q, stderr %q", tt.args, out.String(), errb.String())
				}
				return
			}
			wantCode, wantOut, wantErr := cli(tt.args)
			if code != wantCode || out.String() != wantOut || errb.String() != wantErr {
				t.Errorf("Fast(%q) = %d, stdout %q, stderr %q\ncommand line: %d, stdout %q, stderr %q",
					tt.args, code, out.String(), errb.String(), wantCode, wantOut, wantErr)
			}
			if strings.Contains(out.String(), key) {
				t.Errorf("credential reached the child: %q", out.String())
			}
		})
	}
}

func eventLogSize(t *testing.T, state string) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(state, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
