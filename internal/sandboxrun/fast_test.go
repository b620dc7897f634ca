//go:build linux && amd64

package sandboxrun

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/sandbox"
)

// TestFastDeclines: everything but a well-formed `sandbox run ... -- CMD`
// is left to the full command line, and nothing runs.
func TestFastDeclines(t *testing.T) {
	t.Setenv("COAGENT8_DIR", t.TempDir())
	marker := filepath.Join(t.TempDir(), "ran")
	touch := []string{"--", "/usr/bin/touch", marker}
	for name, args := range map[string][]string{
		"other command":     {"consult", "--", "/usr/bin/true"},
		"sandbox qualify":   {"sandbox", "qualify"},
		"no command":        {"sandbox", "run"},
		"only dash":         {"sandbox", "run", "--"},
		"help":              append([]string{"sandbox", "run", "--help"}, touch...),
		"unknown flag":      append([]string{"sandbox", "run", "--bogus"}, touch...),
		"bad flag value":    append([]string{"sandbox", "run", "--memory-mb", "lots"}, touch...),
		"command before --": {"sandbox", "run", "/usr/bin/touch", marker},
		"missing input":     append([]string{"sandbox", "run", "--input", "/nonexistent-c8"}, touch...),
		"flag before run":   append([]string{"sandbox", "--quiet", "run"}, touch...),
	} {
		var out, errb bytes.Buffer
		if code, ok := Fast(args, &out, &errb); ok {
			t.Errorf("%s: Fast took %q (exit %d)", name, args, code)
		}
		if out.Len()+errb.Len() != 0 {
			t.Errorf("%s: Fast wrote %q %q", name, out.String(), errb.String())
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a declined command ran")
	}
}

// TestFastRuns: a well-formed command runs (qualifying first), writes its
// receipt and exits with the command's status and message.
func TestFastRuns(t *testing.T) {
	t.Setenv("COAGENT8_DIR", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	rec := filepath.Join(t.TempDir(), "receipt.json")
	var out, errb bytes.Buffer
	code, ok := Fast([]string{"sandbox", "run", "--receipt", rec, "--env", "GREETING=hi", "--", "/usr/bin/printenv", "GREETING"}, &out, &errb)
	if !ok || code != 0 || out.String() != "hi\n" || !strings.Contains(errb.String(), "qualifying now") {
		t.Fatalf("Fast = %d, %v; stdout %q; stderr %q", code, ok, out.String(), errb.String())
	}
	var r sandbox.Receipt
	if b, err := os.ReadFile(rec); err != nil || json.Unmarshal(b, &r) != nil || r.Exit.Class != sandbox.ExitExited {
		t.Fatalf("receipt: %v %+v", err, r)
	}
	out.Reset()
	errb.Reset()
	code, ok = Fast([]string{"sandbox", "run", "--quiet", "--", "/usr/bin/false"}, &out, &errb)
	if !ok || code != 1 || errb.String() != "coagent8: sandboxed command exited with status 1\n" {
		t.Errorf("false: Fast = %d, %v; stderr %q", code, ok, errb.String())
	}
	errb.Reset()
	code, ok = Fast([]string{"sandbox", "run", "--quiet", "--", "/usr/bin/../bin/true"}, &out, &errb)
	if !ok || code != 2 || !strings.HasPrefix(errb.String(), "coagent8: error [INVALID_INPUT]") {
		t.Errorf("non-canonical path: Fast = %d, %v; stderr %q", code, ok, errb.String())
	}
}
