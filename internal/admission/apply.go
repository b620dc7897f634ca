package admission

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gitrepo"
	"github.com/coagent8/coagent8/internal/job"
)

// apply plans, stages, commits and rolls forward one admission.
func (a *Admitter) apply(ctx context.Context, j job.Job, r Request) (Result, error) {
	repo, err := gitrepo.Open(ctx, a.o.Env, j.Workspace)
	if err != nil {
		return Result{}, err
	}
	s, err := repo.Scratch("")
	if err != nil {
		return Result{}, applyError(err)
	}
	defer s.Close()
	p, err := makePlan(ctx, repo, s, j.Candidate.Patch)
	if err != nil {
		return Result{}, err
	}
	a.step(stepPlanned)
	jr := &journal{Job: j.ID, Digest: j.Candidate.Digest, Actor: r.Actor, Top: repo.Top,
		Staging: filepath.Join(repo.GitDir, "coagent8-admit-"+j.ID), ThreeWay: p.threeWay}
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
	if _, err := f.WriteString(jr.Staging); err != nil || f.Sync() != nil {
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
	if err := a.commit(jr); err != nil {
		return applyError(err)
	}
	a.step(stepCommitted)
	return nil
}

// writeStaged reads the new blobs from the scratch area (one cat-file
// batch) and writes them as files and symlinks in the staging directory.
func (a *Admitter) writeStaged(ctx context.Context, p *plan, jr *journal) error {
	var ids bytes.Buffer
	for _, o := range p.ops {
		if o.id != "" {
			ids.WriteString(o.id + "\n")
		}
	}
	out, err := p.s.Git(ctx, "", ids.Bytes(), "cat-file", "--batch")
	if err != nil {
		return applyError(err)
	}
	br := bufio.NewReader(bytes.NewReader(out))
	for i := range p.ops {
		o := &p.ops[i]
		if o.id == "" {
			jr.Ops = append(jr.Ops, *o)
			continue
		}
		data, err := readBatch(br, o.id)
		if err != nil {
			return applyError(err)
		}
		o.Staged = strconv.Itoa(i)
		if err := writeOne(filepath.Join(jr.Staging, o.Staged), o.mode, data); err != nil {
			return applyError(err)
		}
		jr.Ops = append(jr.Ops, *o)
	}
	return syncDir(jr.Staging)
}

// readBatch reads one "<id> blob <size>\n<data>\n" record.
func readBatch(br *bufio.Reader, id string) ([]byte, error) {
	hdr, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	f := strings.Fields(hdr)
	if len(f) != 3 || f[0] != id || f[1] != "blob" {
		return nil, fmt.Errorf("cat-file: unexpected header %q", strings.TrimSpace(hdr))
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return nil, err
	}
	data := make([]byte, n+1)
	if _, err := io.ReadFull(br, data); err != nil {
		return nil, err
	}
	return data[:n], nil
}

// writeOne writes a staged file with git's mode (100644, 100755, 120000).
func writeOne(path, mode string, data []byte) error {
	switch mode {
	case "120000":
		return os.Symlink(string(data), path)
	case "100755":
		return writeMode(path, data, 0o755)
	case "100644":
		return writeMode(path, data, 0o644)
	}
	return fmt.Errorf("unsupported git mode %s", mode)
}

func writeMode(path string, data []byte, perm fs.FileMode) error {
	if err := writeSync(path, data, perm); err != nil {
		return err
	}
	return os.Chmod(path, perm) // not narrowed by the umask: the mode is the patch's
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
	a.o.Events.Record(event.Event{Type: event.TypeDecision, Reason: "admission.admitted",
		IDs: map[string]string{"job": jr.Job, "actor": jr.Actor, "digest": jr.Digest}})
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
