//go:build linux && amd64

package sandbox

import (
	"bytes"
	"context"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAgentStdin: AgentSpec.Stdin is the command's standard input (a
// protocol CLI is driven through it); without it the command reads
// /dev/null; a command that exits while the caller's reader still blocks
// ends the run (the pipe closes with it), and cancellation ends a
// command blocked reading stdin.
func TestAgentStdin(t *testing.T) {
	s := newTestSandbox(t)
	serve := func(ln net.Listener) {}
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, ctx context.Context, stdin io.Reader, script string) (string, Receipt) {
		t.Helper()
		var out, errb bytes.Buffer
		spec := AgentSpec{Spec: Spec{Path: sh, Args: []string{"-c", script}, Stdout: &out, Stderr: &errb,
			Limits: Limits{Wall: time.Minute}}, Gate: serve, Stdin: stdin}
		j, err := s.admitAgent(spec) // unqualified run path, as runAgentProbe
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.runJob(ctx, j, "test")
		if err != nil {
			t.Fatalf("run: %v (stderr %s)", err, errb.String())
		}
		return out.String(), r
	}
	t.Run("copied", func(t *testing.T) {
		got, r := run(t, testCtx(t), strings.NewReader("one\ntwo\n"), "cat; echo end")
		if want := "one\ntwo\nend\n"; got != want || !r.Exit.Success() {
			t.Errorf("stdout %q exit %+v, want %q and success", got, r.Exit, want)
		}
	})
	t.Run("none is /dev/null", func(t *testing.T) {
		got, _ := run(t, testCtx(t), nil, "cat; echo end")
		if want := "end\n"; got != want {
			t.Errorf("stdout %q, want %q", got, want)
		}
	})
	t.Run("exit while the caller blocks", func(t *testing.T) {
		pr, pw := io.Pipe()
		defer pw.Close()
		go func() { _, _ = io.WriteString(pw, "line\n") }() // then never closed
		got, r := run(t, testCtx(t), pr, "read x; echo got-$x")
		if want := "got-line\n"; got != want || !r.Exit.Success() {
			t.Errorf("stdout %q exit %+v, want %q and success", got, r.Exit, want)
		}
	})
	t.Run("cancel ends a blocked read", func(t *testing.T) {
		pr, pw := io.Pipe()
		defer pw.Close()
		ctx, cancel := context.WithCancel(testCtx(t))
		go func() {
			_, _ = io.WriteString(pw, "first\n") // returns once the sandbox has read it
			cancel()
		}()
		_, r := run(t, ctx, pr, "cat")
		if r.Exit.Class != ExitCancelled || !r.TreeEmpty {
			t.Errorf("exit %+v tree empty %v, want cancelled and an empty tree", r.Exit, r.TreeEmpty)
		}
	})
}
