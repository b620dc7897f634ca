//go:build linux && amd64

package sandbox

import (
	"context"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// emptyTimeout bounds how long the supervisor waits for the job's cgroup to
// empty after a kill before the run is classified uncertain (R-073: 2 s).
const emptyTimeout = 2 * time.Second

// testOnlyBadChildFd gives PID 1 an invalid descriptor to arrange so tests
// can prove a PID 1 that cannot report still refuses the run.
var testOnlyBadChildFd bool

// testOnlyBreakKill makes cgroup.kill a no-op so tests can prove that an
// unverified tree ends "uncertain".
var testOnlyBreakKill bool

// runJob runs an admitted job and returns its receipt.
func (s *Sandbox) runJob(ctx context.Context, j job, digest string) (Receipt, error) {
	start := time.Now()
	h, err := readHost()
	if err != nil {
		return Receipt{}, err
	}
	if err := s.checkHost(h); err != nil {
		return Receipt{}, err
	}
	layout, err := detectCgroups(s.cfg.CgroupRoot)
	if err != nil {
		return Receipt{}, err
	}
	id := j.id
	if id == "" {
		id = newJobID()
	}
	rec := Receipt{JobID: id, Profile: ProfileTask, PolicyDigest: policyDigest(), BinaryDigest: digest,
		Kernel: h.kernel(layout.source), Command: append([]string{j.path}, j.args...),
		EnvNames: envNames(j.env), EnvRemoved: j.envRemoved, Requested: j.limits, Started: start.UTC()}
	if j.gate != nil {
		rec.Profile = ProfileAgent
		switch {
		case j.candidate != nil:
			rec.Profile = ProfileCandidate
		case j.readWS != "":
			rec.Profile = ProfileRead
		}
		rec.PolicyDigest = agentPolicyDigest(j.gate.port, rec.Profile)
	}
	if j.verifyUpper != "" {
		rec.Profile, rec.PolicyDigest = ProfileVerify, verifyPolicyDigest()
	}
	sweepStale(s.cfg.JobsDir, layout)
	root, lock, err := s.makeJobRoot(id, j)
	if root != "" {
		defer func() {
			removeJobRoot(root)
			if lock != nil {
				lock.Close()
			}
		}()
	}
	if err != nil {
		return Receipt{}, err
	}
	cg, err := layout.create(id, j.limits)
	if err != nil {
		return Receipt{}, err
	}
	defer cg.remove()
	defer finishCandidate(j) // after the tree has ended (supervise returned)
	if err := s.supervise(ctx, j, root, cg, &rec, start); err != nil {
		if len(rec.PinsChanged) > 0 {
			// The command ran: its receipt comes with the refusal.
			rec.TotalMS = ms(time.Since(start))
			return rec, err
		}
		return Receipt{}, err
	}
	collectScratch(root, j.scratchOut)
	rec.Artifacts, rec.ArtifactsRejected, err = collectArtifacts(root, j.artifactsTo)
	if err != nil {
		return rec, err
	}
	rec.TotalMS = ms(time.Since(start))
	return rec, nil
}

// removeJobRoot deletes the job root. The common case is four empty
// directories (the command wrote nothing that outlives it), removed with one
// rmdir each; anything else falls back to a recursive removal.
func removeJobRoot(root string) {
	for _, d := range []string{"workspace", "scratch", "artifacts", "root", ""} {
		if err := unix.Rmdir(filepath.Join(root, d)); err != nil {
			_ = removeTree(root)
			return
		}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
