//go:build linux && amd64

package verify

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/event"
)

// TestRunCandidate runs checks in the verify profile on a candidate whose
// upper layer rewrote file.txt: the check sees the candidate (not the
// workspace), cannot write it, and each result carries its real exit
// status and a verify-profile receipt; neither layer changes.
func TestRunCandidate(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, upper := filepath.Join(dir, "ws"), filepath.Join(dir, "upper")
	for p, body := range map[string]string{filepath.Join(ws, "file.txt"): "old\n", filepath.Join(upper, "file.txt"): "new\n"} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	set, err := config.Verify{Commands: [][]string{
		{"sh", "-c", "grep -q new file.txt"},
		{"sh", "-c", "grep -q old file.txt"},
		{"sh", "-c", "echo x > file.txt"},
	}}.Resolve(config.FromList([]string{"PATH=/usr/bin:/bin"}))
	if err != nil {
		t.Fatal(err)
	}
	checks := newVerifier(t, event.Discard{}).RunCandidate(context.Background(), ws, upper, set)
	type row struct {
		Status   Status
		ExitCode int
		Profile  string
	}
	var got []row
	for _, c := range checks {
		r := row{Status: c.Status, ExitCode: c.ExitCode}
		if c.Receipt != nil {
			r.Profile = c.Receipt.Profile
		}
		got = append(got, r)
	}
	want := []row{{Passed, 0, "verify"}, {Failed, 1, "verify"}, {Failed, 2, "verify"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("checks (-want +got):\n%s\n%+v", d, checks)
	}
	for p, body := range map[string]string{filepath.Join(ws, "file.txt"): "old\n", filepath.Join(upper, "file.txt"): "new\n"} {
		if b, _ := os.ReadFile(p); string(b) != body {
			t.Errorf("%s = %q after the checks, want %q", p, b, body)
		}
	}
}
