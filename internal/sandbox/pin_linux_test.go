//go:build linux && amd64

package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
)

// digestCheck is a Pin check that the file's SHA-256 is want.
func digestCheck(want string) func(*os.File) error {
	return func(f *os.File) error {
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return err
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != want {
			return errors.New("digest " + got + ", want " + want)
		}
		return nil
	}
}

// TestPinnedExecutableSwap: a pinned executable replaced at its path
// after the check (rename over it, as an update does; the test hook runs
// between the check and the fork) never runs: the sandbox mounts the
// checked inode, not the path, and refuses before the fork
// (SANDBOX_UNAVAILABLE sandbox.pin_changed: the checked inode lost its
// link; were that missed, attaching its mount fails, sandbox.setup); a file that differs
// already at check time refuses with sandbox.pin before anything runs;
// an unchanged file runs (issue 15 scope 5). Before pinning, the bind by
// path ran the swapped file.
func TestPinnedExecutableSwap(t *testing.T) {
	s := newTestSandbox(t)
	dir, err := os.MkdirTemp("/var/tmp", "coagent8-pin-") // /tmp is the sandbox's own
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	exe := filepath.Join(dir, "tool")
	original := []byte("#!/bin/sh\necho original\n")
	sum := sha256.Sum256(original)
	want := hex.EncodeToString(sum[:])
	swap := func(string) {
		tmp := exe + ".new"
		if err := os.WriteFile(tmp, []byte("#!/bin/sh\necho swapped\n"), 0o755); err != nil {
			t.Error(err)
		}
		if err := os.Rename(tmp, exe); err != nil {
			t.Error(err)
		}
	}
	spec := func(out *bytes.Buffer) AgentSpec {
		return AgentSpec{Spec: Spec{Path: exe, ReadOnly: []string{exe}, Stdout: out, Stderr: out}, Gate: func(net.Listener) {},
			Pinned: []Pin{{Path: exe, Check: digestCheck(want)}}}
	}

	if err := os.WriteFile(exe, original, 0o755); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r, err := s.runAgentUnqualified(t, spec(&out))
	if err != nil || !r.Exit.Success() || out.String() != "original\n" {
		t.Fatalf("unchanged pinned file: %v exit %+v output %q, want original", err, r.Exit.Code, out.String())
	}

	out.Reset()
	testOnlyAfterPin = swap
	_, err = s.runAgentUnqualified(t, spec(&out))
	testOnlyAfterPin = nil
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Code != fault.SandboxUnavailable || fe.Reason != "sandbox.pin_changed" ||
		!strings.Contains(fe.Message, "0 links, was 1") {
		t.Errorf("swapped after the check: %v, want SANDBOX_UNAVAILABLE sandbox.pin_changed (unlinked)", err)
	}
	if out.Len() != 0 {
		t.Errorf("the sandbox ran %q after the swap, want nothing", out.String())
	}

	// Now the path holds the swapped file: the check refuses.
	out.Reset()
	_, err = s.runAgentUnqualified(t, spec(&out))
	if !errors.As(err, &fe) || fe.Code != fault.SandboxUnavailable || fe.Reason != "sandbox.pin" {
		t.Errorf("changed file: %v, want SANDBOX_UNAVAILABLE sandbox.pin", err)
	}
	if out.Len() != 0 {
		t.Errorf("something ran: %q", out.String())
	}
	if _, err := s.admitAgent(AgentSpec{Spec: Spec{Path: exe}, Gate: func(net.Listener) {},
		Pinned: []Pin{{Path: exe, Check: digestCheck(want)}}}); !fault.HasCode(err, fault.InvalidInput) {
		t.Errorf("pin without its read-only bind: %v, want INVALID_INPUT", err)
	}
}

// TestPinCheckByDescriptor: the unprivileged supervisor's check (no
// mount clone) reads the file through a descriptor that does not follow
// a symlink, and passes the check's refusal through.
func TestPinCheckByDescriptor(t *testing.T) {
	dir := t.TempDir()
	exe, link := filepath.Join(dir, "tool"), filepath.Join(dir, "link")
	os.WriteFile(exe, []byte("x"), 0o755)
	os.Symlink(exe, link)
	sum := sha256.Sum256([]byte("x"))
	ok := digestCheck(hex.EncodeToString(sum[:]))
	for _, tc := range []struct {
		name, path string
		check      func(*os.File) error
		reason     string
	}{
		{"checked", exe, ok, ""},
		{"other content", exe, digestCheck("00"), "sandbox.pin"},
		{"symlink", link, ok, "sandbox.pin"},
	} {
		w, err := checkByDescriptor([]pinned{{path: tc.path, check: tc.check}})
		w.close()
		var fe *fault.Error
		if got := ""; errors.As(err, &fe) {
			got = fe.Reason
			if got != tc.reason {
				t.Errorf("%s: reason %q, want %q (%v)", tc.name, got, tc.reason, err)
			}
		} else if tc.reason != "" || err != nil {
			t.Errorf("%s: %v, want reason %q", tc.name, err, tc.reason)
		}
	}
}
