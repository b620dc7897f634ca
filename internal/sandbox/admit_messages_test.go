package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
)

// TestLimitMessagesInFlagUnits: a rejected limit is reported in the unit
// the caller set it in, not in bytes or nanoseconds.
func TestLimitMessagesInFlagUnits(t *testing.T) {
	for _, tt := range []struct {
		l    Limits
		want string
	}{
		{Limits{Memory: 1 << 20}, "limit memory=1 MiB is outside [16 MiB, "},
		{Limits{Wall: -time.Second}, "limit wall=-1s is outside [10ms, 24h0m0s]"},
		{Limits{Pids: 1}, "limit pids=1 is outside [8, "},
		{Limits{CPU: 1}, "limit cpu=1 millicores is outside [10 millicores, "},
		{Limits{Output: -5}, "limit output=-5 bytes is outside [1 bytes, "},
	} {
		_, err := tt.l.withDefaults()
		fe := fault.From(err)
		if fe == nil || fe.Code != fault.InvalidInput || !strings.HasPrefix(fe.Message, tt.want) {
			t.Errorf("%+v: %v; want a message starting %q", tt.l, err, tt.want)
		}
	}
}

// TestWorkingDirMustExistInInput: --dir names a directory of the input; a
// missing one is the caller's INVALID_INPUT, found before anything runs.
func TestWorkingDirMustExistInInput(t *testing.T) {
	input := filepath.Join(t.TempDir(), "in")
	if err := os.MkdirAll(filepath.Join(input, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(input, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(input, "link")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		input, dir string
		ok         bool
	}{
		{"", "", true}, {"", ".", true}, {input, "sub", true}, {input, "", true},
		{"", "sub", false}, {input, "nope", false}, {input, "file", false}, {input, "link", false},
	} {
		err := checkDirInInput(tt.input, tt.dir)
		if got := err == nil; got != tt.ok {
			t.Errorf("input %q dir %q: err %v, want ok=%v", tt.input, tt.dir, err, tt.ok)
		}
		if err != nil && !fault.HasCode(err, fault.InvalidInput) {
			t.Errorf("input %q dir %q: %v, want INVALID_INPUT", tt.input, tt.dir, err)
		}
	}
}

// TestForbiddenRootMessage names the root and the alternatives, for a
// root itself too: /tmp was refused as overlapping coagent8's state
// directory (which lay under it) instead of as a root the sandbox
// replaces.
func TestForbiddenRootMessage(t *testing.T) {
	state, err := os.MkdirTemp("/tmp", "c8-state-") // under /tmp: /tmp overlaps it
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(state)
	s, err := New(Config{StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	p, err := os.MkdirTemp("/tmp", "c8-forbidden-") // apart from the state and jobs directories
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(p)
	const outside = "; bind a path outside /proc, /sys, /dev, /tmp, /job, /run, /var/run"
	for _, tt := range []struct{ path, want string }{
		{"/tmp", "/tmp is a directory the sandbox replaces with its own" + outside},
		{p, p + " is under /tmp, which the sandbox replaces with its own" + outside},
		{p + "/missing", p + "/missing is under /tmp, which the sandbox replaces with its own" + outside},
		{"/proc", "/proc is a directory the sandbox replaces with its own" + outside},
		{"/dev/null", "/dev/null is under /dev, which the sandbox replaces with its own" + outside},
		{"/tmp/../etc", "path is not canonical"},
	} {
		_, err := s.admitBind(tt.path)
		fe := fault.From(err)
		if got := []string{string(fe.Code), fe.Reason, fe.Message}; fe.Code != fault.InvalidInput || fe.Message != tt.want {
			t.Errorf("admitBind(%s) = %q, want INVALID_INPUT %q", tt.path, got, tt.want)
		}
	}
}

func newTestSandboxAnyOS(t *testing.T) *Sandbox {
	t.Helper()
	s, err := New(Config{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
