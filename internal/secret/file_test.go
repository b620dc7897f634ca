//go:build linux

package secret

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestReadFileRefusesNonRegular: a file: reference to a FIFO (whose open
// blocked every resolution for good), a device (/dev/zero was read until
// memory ran out), a directory, a missing path or an oversized file is a
// *BindingError saying what to fix that names the reference and no byte
// of the file; a symlink to a regular credential file resolves. Each
// resolution runs in its own goroutine so a hang fails instead of
// stalling the suite (the bound is a hang detector, far above any
// machine's time for a stat and a read).
func TestReadFileRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo, big, ok, link := filepath.Join(dir, "fifo"), filepath.Join(dir, "big"), filepath.Join(dir, "ok"), filepath.Join(dir, "link")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("Z", MaxFileBytes+1)
	if err := os.WriteFile(big, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ok, []byte(canary()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(ok, link); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want string // "" = resolves to the canary
	}{
		{fifo, "not a regular file"},
		{"/dev/zero", "not a regular file"},
		{dir, "not a regular file"},
		{filepath.Join(dir, "missing"), "file unreadable"},
		{big, "larger than 64 KiB"},
		{link, ""},
	}
	type result struct {
		v   Value
		err error
	}
	var got, want []string
	for _, tt := range tests {
		r, err := ParseRef("file:" + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan result, 1)
		go func() {
			v, err := Resolver{}.Resolve(r)
			done <- result{v, err}
		}()
		var res result
		select {
		case res = <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("Resolve(%s) still blocked after 30 s", r)
		}
		var be *BindingError
		switch {
		case res.err == nil && res.v.Reveal() == canary():
			got = append(got, tt.path+": resolves")
		case errors.As(res.err, &be) && strings.Contains(res.err.Error(), r.String()) && strings.Contains(res.err.Error(), tt.want) &&
			!strings.Contains(res.err.Error(), "ZZZZ"):
			got = append(got, tt.path+": "+tt.want)
		default:
			got = append(got, tt.path+": "+strings.ReplaceAll(res.err.Error(), "ZZZZ", "<file bytes>"))
		}
		if tt.want == "" {
			want = append(want, tt.path+": resolves")
		} else {
			want = append(want, tt.path+": "+tt.want)
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("file references (-want +got):\n%s", d)
	}
}
