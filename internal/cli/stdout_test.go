package cli

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/exitstatus"
)

// failingOut fails every write with err, as a stdout whose reader is gone
// does where no SIGPIPE ends the process first (Windows, in-process).
type failingOut struct{ err error }

func (f failingOut) Write([]byte) (int, error) {
	return 0, &fs.PathError{Op: "write", Path: "/dev/stdout", Err: f.err}
}

// TestClosedStdoutIsQuiet: a command whose stdout's reader went away
// (`coagent8 jobs | head -1`) prints nothing on stderr — no "broken pipe",
// no internal error, no usage hint — and exits as SIGPIPE would (141), or
// 0 when it finished regardless (help). Any other write error is still
// reported.
func TestClosedStdoutIsQuiet(t *testing.T) {
	closedPipe := func() io.Writer {
		r, w := io.Pipe()
		r.Close()
		return w
	}
	tests := []struct {
		name     string
		args     []string
		stdin    string
		out      func() io.Writer
		wantCode int
		wantErr  string // substring of stderr; "" = stderr empty
	}{
		{"help", []string{"--help"}, "", func() io.Writer { return failingOut{syscall.EPIPE} }, ExitOK, ""},
		{"version", []string{"version"}, "", func() io.Writer { return failingOut{syscall.EPIPE} }, exitstatus.BrokenPipe, ""},
		{"version flag", []string{"--version"}, "", func() io.Writer { return failingOut{syscall.EPIPE} }, exitstatus.BrokenPipe, ""},
		{"jobs", []string{"jobs"}, "", func() io.Writer { return failingOut{syscall.EPIPE} }, exitstatus.BrokenPipe, ""},
		{"audit", []string{"audit"}, "", func() io.Writer { return failingOut{syscall.EPIPE} }, exitstatus.BrokenPipe, ""},
		{"audit, another write error", []string{"audit"}, "", func() io.Writer { return failingOut{syscall.EIO} },
			ExitFailure, "coagent8: error"},
		{"completion", []string{"completion", "bash"}, "", func() io.Writer { return failingOut{syscall.EPIPE} }, exitstatus.BrokenPipe, ""},
		{"redact", []string{"redact"}, "a line\n", func() io.Writer { return failingOut{syscall.EPIPE} }, exitstatus.BrokenPipe, ""},
		{"jobs into a closed io.Pipe", []string{"jobs"}, "", closedPipe, exitstatus.BrokenPipe, ""},
		{"another write error is reported", []string{"version"}, "", func() io.Writer { return failingOut{syscall.EIO} },
			ExitFailure, "coagent8: error [PROCESS_ERROR] internal error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := testEnv(t)
			// One event, so audit has a line to write.
			line := `{"type":"refusal","time":"2026-01-02T03:04:05Z","code":"AUTH_REQUIRED","reason":"codex.not_signed_in","backend":"codex"}` + "\n"
			if err := os.WriteFile(filepath.Join(env.StateDir(), "events.jsonl"), []byte(line), 0o600); err != nil {
				t.Fatal(err)
			}
			var errb bytes.Buffer
			code := MainEnv(context.Background(), tt.args, Stdio{In: strings.NewReader(tt.stdin), Out: tt.out(), Err: &errb}, env)
			if d := cmp.Diff(tt.wantCode, code); d != "" {
				t.Errorf("exit (-want +got):\n%s\nstderr: %q", d, errb.String())
			}
			if got := errb.String(); (tt.wantErr == "" && got != "") || !strings.Contains(got, tt.wantErr) {
				t.Errorf("stderr = %q, want %q", got, tt.wantErr)
			}
		})
	}
}

// countingOut fails every write with EPIPE and counts the attempts.
type countingOut struct{ n *int }

func (c countingOut) Write([]byte) (int, error) { *c.n++; return 0, syscall.EPIPE }

// TestAuditStopsAtFirstFailedWrite: `coagent8 audit` into a reader that
// went away stops at the first failed line (it wrote every line into
// the broken pipe and exited 0).
func TestAuditStopsAtFirstFailedWrite(t *testing.T) {
	env := testEnv(t)
	line := `{"type":"refusal","time":"2026-01-02T03:04:05Z","code":"AUTH_REQUIRED","reason":"codex.not_signed_in","backend":"codex"}` + "\n"
	if err := os.WriteFile(filepath.Join(env.StateDir(), "events.jsonl"), []byte(strings.Repeat(line, 5)), 0o600); err != nil {
		t.Fatal(err)
	}
	var n int
	var errb bytes.Buffer
	code := MainEnv(context.Background(), []string{"audit"}, Stdio{In: strings.NewReader(""), Out: countingOut{&n}, Err: &errb}, env)
	if got, want := code, exitstatus.BrokenPipe; got != want {
		t.Errorf("exit %d, want %d (stderr %q)", got, want, errb.String())
	}
	if got, want := n, 1; got != want {
		t.Errorf("write attempts %d, want %d", got, want)
	}
	if errb.Len() != 0 {
		t.Errorf("stderr %q, want empty", errb.String())
	}
}
