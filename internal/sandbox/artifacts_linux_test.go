//go:build linux && amd64

package sandbox

import (
	"bytes"
	"testing"
)

// TestArtifactsRejectedBounded: the artifacts folder is the command's,
// and every entry past the collection bounds was read into the
// supervisor's memory (outside the sandbox's memory ceiling) and named in
// the receipt: 20,000 empty files made a 4.7 MB receipt, and the inode
// bound (2 Mi files) allowed one of ~500 MB. The receipt now names at
// most maxArtifactsRejected entries and says that more were left, and
// the walk stops reading once nothing more can be collected or named.
func TestArtifactsRejectedBounded(t *testing.T) {
	var out bytes.Buffer
	script := `cd /job/artifacts; i=0; while [ $i -lt 3000 ]; do : > f$i; i=$((i+1)); done; mkdir d; : > d/late`
	r := runUnqualified(t, newTestSandbox(t), testCtx(t), Spec{Path: "/usr/bin/dash", Args: []string{"-c", script},
		Stdout: &out, Stderr: &out})
	if !r.Exit.Success() {
		t.Fatalf("exit %+v:\n%s", r.Exit, out.String())
	}
	if got, want := len(r.Artifacts), maxArtifacts; got != want {
		t.Errorf("%d artifacts collected, want %d", got, want)
	}
	if got, max := len(r.ArtifactsRejected), maxArtifactsRejected+1; got == 0 || got > max {
		t.Errorf("%d rejected entries in the receipt, want 1 to %d", got, max)
	}
}
