package quarantine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/candidate"
	"github.com/coagent8/coagent8/internal/fault"
)

// TestBuildBoundsTotalRead: each candidate file is bounded by
// MaxPatchBytes, but the walk admits a million entries, so files just
// under the bound (sparse: no disk, nothing the agent pays for) made the
// build read, hash and deflate them all in the supervising coagent8,
// about 150 ms of CPU each with no time limit: hours for a hostile
// candidate before the patch bound could refuse. The bytes read in all
// are bounded too, and the refusal comes before the first byte past it
// is read.
func TestBuildBoundsTotalRead(t *testing.T) {
	repo, base := newRepo(t, map[string]string{"main.go": "package main\n"})
	up := t.TempDir()
	var changes []candidate.Change
	n := int(MaxReadBytes/MaxPatchBytes) + 2
	for i := range n {
		p := fmt.Sprintf("blob%03d.bin", i)
		f, err := os.Create(filepath.Join(up, p))
		if err != nil {
			t.Fatal(err)
		}
		// Distinct content (one byte) so every blob is its own object.
		if _, err := f.WriteAt([]byte{byte(i)}, MaxPatchBytes-1); err != nil {
			t.Fatal(err)
		}
		f.Close()
		changes = append(changes, change(candidate.Added, p, 0o644))
	}
	start := time.Now()
	_, err := Build(context.Background(), Input{Repo: repo, Base: base, Upper: up, Changes: changes})
	got, want := fault.From(err), fault.New(fault.InputLimit, ReasonTooLarge, "")
	if err == nil || got.Code != want.Code || got.Reason != want.Reason {
		t.Fatalf("Build of %d files of %d MiB: err %v, want %s %s", n, MaxPatchBytes>>20, err, want.Code, want.Reason)
	}
	t.Logf("refused after %v: %v", time.Since(start), err)
}
