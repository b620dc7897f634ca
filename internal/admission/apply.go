package admission

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gitrepo"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/quarantine"
)

// apply plans, stages, commits and rolls forward one admission.
func (a *Admitter) apply(ctx context.Context, j job.Job, r Request) (Result, error) {
	repo, err := gitrepo.Open(ctx, a.o.Env, j.Workspace)
	if err != nil {
		return Result{}, err
	}
	// An `uncommitted` base's preimages are the user's bytes of then, in
	// the job's own object directory only: the three-way apply reads them
	// there (missing, the three-way apply fails and reports a conflict).
	_, objects := quarantine.SplitBase(j.Base, filepath.Join(a.o.StateDir, "jobs", j.ID))
	s, err := repo.ScratchWith("", objects...)
	if err != nil {
		return Result{}, applyError(err)
	}
	defer s.Close()
	p, err := makePlan(ctx, repo, s, j.Candidate.Patch)
	if err != nil {
		return Result{}, err
	}
	p.req = r
	a.step(stepPlanned)
	jr := &journal{Job: j.ID, Digest: j.Candidate.Digest, Actor: r.Actor, Top: repo.Top,
		Staging: filepath.Join(repo.GitDir, "coagent8-admit-"+j.ID), ThreeWay: p.threeWay, Ack: r.Ack}
	if err := a.stage(ctx, p, jr); err != nil {
		return Result{}, err
	}
	defer p.lock.Close()
	return a.finish(ctx, jr)
}

// claim takes the job's pending lock and records the staging directory in
// it. A held lock, or a pending marker left by a dead process (recovered
// by [New]), is SESSION_BUSY admission.in_progress.
func (a *Admitter) claim(jr *journal) (*os.File, error) {
	busy := fault.New(fault.SessionBusy, ReasonInProgress, "Another admission of this job is in progress.").WithRetry()
	if _, err := os.Stat(a.pendingPath(jr.Job)); err == nil {
		return nil, busy
	}
	f, ok, err := lockPending(a.pendingPath(jr.Job))
	switch {
	case err != nil && errors.Is(err, errors.ErrUnsupported):
		return nil, fault.New(fault.Unsupported, ReasonDevice, "Atomic admission is not available on this platform.")
	case err != nil:
		return nil, applyError(err)
	case !ok:
		return nil, busy
	}
	// Not fsynced: the marker matters while its process lives (the lock)
	// and after a crash only to find a staging directory to discard; the
	// journal is the durable record.
	if _, err := f.WriteString(jr.Staging); err != nil {
		f.Close()
		os.Remove(a.pendingPath(jr.Job))
		return nil, applyError(err)
	}
	return f, nil
}

func (a *Admitter) step(n int) {
	if a.o.testOnlyStep != nil {
		a.o.testOnlyStep(n)
	}
}

// stage writes every new file into the staging directory, rechecks the
// checkout and commits the journal. On any failure before the commit
// point it removes what it staged.
func (a *Admitter) stage(ctx context.Context, p *plan, jr *journal) (err error) {
	lock, err := a.claim(jr)
	if err != nil {
		return err
	}
	p.lock = lock
	defer func() {
		if err != nil {
			os.RemoveAll(jr.Staging)
			os.Remove(a.pendingPath(jr.Job))
			lock.Close()
		}
	}()
	if err := os.Mkdir(jr.Staging, 0o700); err != nil {
		return applyError(err)
	}
	if !sameDevice(jr.Staging, jr.Top) {
		return fault.New(fault.Unsupported, ReasonDevice, "The git directory is not on the work tree's file system, so the admission cannot be atomic.")
	}
	if err := a.writeStaged(ctx, p, jr); err != nil {
		return err
	}
	a.step(stepStaged)
	if err := recheck(p); err != nil {
		return err
	}
	// The job too may have changed since admissible(): quarantined
	// (tainted), rejected or expired while this admission planned. Checked
	// again under the pending lock, just before the commit point, so such a
	// job is refused as it would be now.
	if j, err := a.admissible(ctx, p.req); err != nil {
		return err
	} else if j.Candidate.Digest != jr.Digest {
		return fault.New(fault.SandboxUnavailable, ReasonDigest, "The stored candidate changed during the admission.")
	}
	a.step(stepChecked)
	if err := a.commit(jr); err != nil {
		return applyError(err)
	}
	a.step(stepCommitted)
	return nil
}

// writeStaged checks the scratch index out below the staging directory
// (`git checkout-index --prefix`: the same content conversion, modes and
// symbolic links as git apply writing the work tree), or on the fast path
// applies the patch to copies of the preimages there, derives the
// operations from what it wrote, and fsyncs the files in parallel (one
// file system journal commit covers most of them).
func (a *Admitter) writeStaged(ctx context.Context, p *plan, jr *journal) error {
	if p.fast != nil {
		if err := a.stageFast(ctx, p, p.fast, jr.Staging); err != nil {
			return err
		}
	} else if _, err := p.s.Git(ctx, p.repo.Top, nil, "checkout-index", "-a", "-f", "--prefix="+jr.Staging+string(filepath.Separator)); err != nil {
		return applyError(err)
	}
	var dels, puts []op
	for _, path := range p.paths {
		st, err := os.Lstat(filepath.Join(jr.Staging, filepath.FromSlash(path)))
		switch {
		case err == nil && !st.IsDir():
			puts = append(puts, op{Target: path, Staged: path})
		case p.pre[path].exists:
			dels = append(dels, op{Target: path})
		}
	}
	sort.Slice(dels, func(i, k int) bool { return dels[i].Target > dels[k].Target })
	jr.Ops = append(dels, puts...)
	return syncAll(jr.Staging, puts)
}

// syncAll fsyncs the staged regular files concurrently, then the staging
// directories.
func syncAll(staging string, puts []op) error {
	errs := make([]error, len(puts))
	var wg sync.WaitGroup
	for i, o := range puts {
		wg.Go(func() { errs[i] = syncFile(filepath.Join(staging, filepath.FromSlash(o.Staged))) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return applyError(err)
	}
	return syncDir(staging)
}

func syncFile(path string) error {
	if st, err := os.Lstat(path); err != nil || !st.Mode().IsRegular() {
		return err // a symlink's target is in its directory entry
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// recheck refuses when a touched path changed since it was planned.
func recheck(p *plan) error {
	now, err := statAll(p.repo.Top, p.paths)
	if err != nil {
		return err
	}
	for _, path := range p.paths {
		if now[path] != p.pre[path] {
			return fault.New(fault.InvalidInput, ReasonChanged,
				fmt.Sprintf("The checkout changed during the admission (%q); nothing was written.", path)).With("path", path).WithRetry()
		}
	}
	return nil
}

// finish rolls the committed journal forward, records the admission and
// removes the journal.
func (a *Admitter) finish(ctx context.Context, jr *journal) (Result, error) {
	if err := a.rollForward(jr); err != nil {
		// The journal stays: the next New finishes it.
		return Result{}, applyError(err)
	}
	if err := a.o.Jobs.MarkAdmitted(ctx, jr.Job, jr.Actor, jr.Digest); err != nil && !fault.HasCode(err, fault.InvalidInput) {
		return Result{}, err
	}
	ids := map[string]string{"job": jr.Job, "actor": jr.Actor, "digest": jr.Digest}
	if len(jr.Ack) > 0 {
		ids["ack"] = strings.Join(jr.Ack, ",")
	}
	a.o.Events.Record(event.Event{Type: event.TypeDecision, Reason: "admission.admitted", IDs: ids})
	a.cleanup(jr)
	res := Result{Job: jr.Job, Digest: jr.Digest, ThreeWay: jr.ThreeWay}
	for _, o := range jr.Ops {
		res.Paths = append(res.Paths, o.Target)
	}
	return res, nil
}

func (a *Admitter) cleanup(jr *journal) {
	os.Remove(a.journalPath(jr.Job))
	os.RemoveAll(jr.Staging)
	os.Remove(a.pendingPath(jr.Job))
}
