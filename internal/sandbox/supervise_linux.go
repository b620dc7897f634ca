//go:build linux && amd64

package sandbox

import (
	"context"
	"fmt"
	"github.com/coagent8/coagent8/internal/crash"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/coagent8/coagent8/internal/fault"
)

// supervise starts PID 1, releases it, waits for the end (exit,
// cancellation, deadline, output limit), kills and verifies the tree, and
// fills rec (notes §3 step 11).
func (s *Sandbox) supervise(ctx context.Context, j job, root string, cg *jobCgroups, rec *Receipt, start time.Time) error {
	if ctx.Err() != nil {
		// Cancelled before anything started: nothing runs.
		rec.Exit, rec.TreeEmpty = Exit{Class: ExitCancelled, Code: -1}, true
		return nil
	}
	h, err := startPID1(j, root, cg)
	if err != nil {
		return err
	}
	defer h.closeAll()
	out := newOutputBound(j.limits.Output)
	var copiers sync.WaitGroup
	for i, w := range []io.Writer{j.stdout, j.stderr} {
		copiers.Add(1)
		go func() { defer copiers.Done(); out.copy(w, h.outR[i]) }()
	}
	if err := h.release(j.limits); err != nil {
		h.kill(cg)
		h.forceKill(cg)
		if ws := <-h.done; ws.Exited() && ws.ExitStatus() == exitFds {
			// PID 1 died before release: it could not arrange its
			// descriptors (it cannot report that itself).
			return unavailable("setup", "descriptors", err)
		}
		return err
	}
	if h.stdinW != nil {
		// Not waited for: a Read blocked in the caller's reader is the
		// caller's to end; the pipe's write end closes below either way.
		go feedStdin(h.stdinW, j.gate.stdin)
	}
	runStart := time.Now()
	rec.SetupMS = ms(runStart.Sub(start))
	disk := watchDisk(diskDirs(root, j.candidate), j.limits)
	killed := h.await(ctx, j.limits.Wall, out, disk.over, cg)
	disk.stop()
	if h.stdinW != nil {
		h.stdinW.Close() // ends a blocked write: the run is over
	}
	rec.TreeEmpty = cg.waitEmpty(emptyTimeout)
	if !rec.TreeEmpty {
		h.forceKill(cg)
	}
	ws := <-h.done
	rec.RunMS = ms(time.Since(runStart))
	copiers.Wait()
	st := h.status()
	if st != nil && st.Reason != "" && killed == 0 {
		return unavailable(st.Reason, st.Missing, fault.New(fault.ProcessError, "sandbox.setup", st.Missing+": "+st.Error))
	}
	if st == nil && killed == 0 && ws.Exited() {
		// PID 1 exits without a report only when it could not even
		// arrange its descriptors (exitFds): nothing ran.
		return unavailable("setup", "descriptors", fault.New(fault.ProcessError, "sandbox.setup",
			fmt.Sprintf("PID 1 exited %d before reporting", ws.ExitStatus())))
	}
	rec.Observed = cg.observe()
	rec.Observed.OutputBytes = out.total.Load()
	rec.Observed.FileSizeLimit = j.limits.FileSize
	rec.Exit = classify(killed, st, ws, rec.Observed, rec.TreeEmpty)
	return h.pinResult(rec)
}

// pinResult compares the pins once more now that the run has ended (a
// write into a file that was not busy, during the run) unless the
// after-exec comparison already refused, and records any changed file
// in rec. Its error refuses the run's result (rec stays the record of
// what ran).
func (h *pid1) pinResult(rec *Receipt) error {
	err := h.pinErr
	if err == nil {
		err = h.pins.verify(pinAtEnd)
	}
	if err != nil {
		rec.PinsChanged = h.pins.changed
	}
	return err
}

// feedStdin copies at most MaxAgentStdin bytes of r into the command's
// stdin and closes it (EOF for the command) at r's end or the bound.
func feedStdin(w *os.File, r io.Reader) {
	_, _ = io.Copy(w, io.LimitReader(r, MaxAgentStdin))
	w.Close()
}

// await blocks until PID 1 exits or a kill reason arrives, and kills
// the tree in the latter case. It returns the kill class (0 if none).
func (h *pid1) await(ctx context.Context, wall time.Duration, out *outputBound, disk <-chan struct{}, cg *jobCgroups) ExitClass {
	timer := time.NewTimer(wall)
	defer timer.Stop()
	execd := h.execd
	var class ExitClass
	for class == 0 {
		select {
		case ws := <-h.done:
			h.done <- ws // put back for the caller
			return 0
		case <-execd:
			// The command runs: a pinned file written between the
			// release and the exec (while PID 1 set up) ends it now,
			// as a kill of the supervisor's (pinResult refuses).
			execd = nil
			if h.pinErr = h.pins.verify(pinAtExec); h.pinErr != nil {
				class = ExitCancelled
			}
			if testOnlyAfterExecCheck != nil {
				testOnlyAfterExecCheck()
			}
		case <-ctx.Done():
			class = ExitCancelled
		case <-timer.C:
			class = ExitTimedOut
		case <-out.over:
			class = ExitOutputLimit
		case <-disk:
			class = ExitDiskLimit
		}
	}
	h.kill(cg)
	return class
}

// forceKill is the last resort after an unverified kill; it ignores test
// fault injection so a test never leaks processes. PID 1 is signalled
// through its pidfd: by pid it may already be reaped and the number
// reused.
func (h *pid1) forceKill(cg *jobCgroups) {
	_ = cg.kill()
	_ = unix.PidfdSendSignal(h.pidfd, unix.SIGKILL, nil, 0)
	cg.waitEmpty(emptyTimeout)
}

// classify maps what was observed to an exit class. Precedence: an
// unverified tree is uncertain whatever else happened; a supervisor kill
// names its reason; an OOM kill recorded by the memory controller wins over
// the bare signal it caused.
func classify(killed ExitClass, st *childStatus, ws syscall.WaitStatus, o Observed, empty bool) Exit {
	e := Exit{Code: -1}
	if st != nil && st.Reason == "" {
		if st.Exited {
			e.Code = st.Code
		} else {
			e.Signal = signalName(syscall.Signal(st.Signal))
		}
	}
	switch {
	case !empty:
		e.Class = ExitUncertain
	case killed != 0:
		e.Class = killed
	case o.OOMKills > 0:
		e.Class = ExitOutOfMemory
	case st == nil:
		e.Class = ExitSignalled
		if ws.Signaled() {
			e.Signal = signalName(ws.Signal())
		}
	case st.Exited:
		e.Class = ExitExited
	default:
		e.Class = ExitSignalled
	}
	return e
}

// outputBound forwards at most limit bytes in total across stdout and
// stderr and signals once when the child exceeds it.
type outputBound struct {
	limit int64
	total atomic.Int64
	over  chan struct{}
	once  sync.Once
	mu    sync.Mutex
}

func newOutputBound(limit int64) *outputBound {
	return &outputBound{limit: limit, over: make(chan struct{})}
}

func (o *outputBound) copy(w io.Writer, r *os.File) {
	for !o.copyUntilPanic(w, r) {
		// w panicked (the caller's writer: a delegate job's activity
		// reader parses what the agent wrote). Nothing more reaches it, but
		// the pipe stays drained and counted, so the command neither
		// blocks on a full pipe nor escapes the output bound, and the run
		// ends as it would have.
		w = io.Discard
	}
}

// copyUntilPanic forwards r to w until r ends (true) or w panics (false,
// the panic logged by the crash guard; the MCP server that runs delegate
// jobs must outlive it).
func (o *outputBound) copyUntilPanic(w io.Writer, r *os.File) (ended bool) {
	defer crash.Stderr.Recover("sandbox output writer", nil)
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			o.forward(w, buf[:n])
		}
		if err != nil {
			return true
		}
	}
}

func (o *outputBound) forward(w io.Writer, b []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	before := o.total.Add(int64(len(b))) - int64(len(b))
	if room := o.limit - before; room > 0 {
		_, _ = w.Write(b[:min(int64(len(b)), room)])
	}
	if o.total.Load() > o.limit {
		o.once.Do(func() { close(o.over) })
	}
}

// diskPoll is how often the file systems a run writes are read.
const diskPoll = 100 * time.Millisecond

// diskWatch reads the file systems a run writes while it runs
// ([Limits.Disk]); over is closed once the bound is passed.
type diskWatch struct {
	over chan struct{}
	done chan struct{}
	wg   sync.WaitGroup
}

// diskDirs are the host directories a run writes: its job root and a
// candidate's directory.
func diskDirs(root string, c *candidateRoots) []string {
	dirs := []string{root}
	if c != nil {
		dirs = append(dirs, filepath.Dir(c.upper))
	}
	return dirs
}

// watchDisk starts the watch of dirs' file systems (one whose free space
// cannot be read at the start is not watched), bounded by lim's Disk and
// DiskFiles.
func watchDisk(dirs []string, lim Limits) *diskWatch {
	w := &diskWatch{over: make(chan struct{}), done: make(chan struct{})}
	start := map[string]fsFree{}
	for _, d := range dirs {
		if f, err := freeOf(d); err == nil {
			start[d] = f
		}
	}
	if len(start) == 0 {
		return w
	}
	w.wg.Go(func() {
		t := time.NewTicker(diskPoll)
		defer t.Stop()
		for {
			for d, s := range start {
				if f, err := freeOf(d); err == nil && s.exceeded(f, lim) {
					close(w.over)
					return
				}
			}
			select {
			case <-w.done:
				return
			case <-t.C:
			}
		}
	})
	return w
}

func (w *diskWatch) stop() {
	close(w.done)
	w.wg.Wait()
}

// fsFree is what a file system has left for an unprivileged writer.
type fsFree struct {
	bytes, files int64
	countsFiles  bool // f_files > 0: the file system has a fixed inode table
}

// exceeded reports whether now, read after s, passes lim's bounds.
func (s fsFree) exceeded(now fsFree, lim Limits) bool {
	if s.bytes-now.bytes > lim.Disk || now.bytes < MinFreeDisk && now.bytes < s.bytes {
		return true
	}
	return s.countsFiles && (s.files-now.files > lim.DiskFiles || now.files < MinFreeFiles && now.files < s.files)
}

func freeOf(dir string) (fsFree, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return fsFree{}, err
	}
	return fsFree{bytes: int64(st.Bavail) * st.Bsize, files: int64(st.Ffree), countsFiles: st.Files > 0}, nil
}
