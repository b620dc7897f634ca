package session

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/turn"
)

// Streaming bounds: chunks are written at flushBytes; what a turn streams
// beyond maxStreamBytes is not archived until the final answer replaces it.
const (
	flushBytes     = 64 << 10
	maxStreamBytes = 2 * turn.MaxOutputBytes
	pollEvery      = 250 * time.Millisecond
)

// Warnings returned by End (shown to the caller, bounded by turn).
const (
	warnUnavailable = "History unavailable: the session archive could not be written (disk full or database locked); the answer was not archived and this session cannot be continued."
	warnEndFailed   = "History incomplete: the session archive could not record the end of this turn; the answer was not archived and continuation may be unavailable."
)

// errCancelled is the cause given to a turn's context by the cancel tool.
var errCancelled = errors.New("cancelled by the cancel tool")

// lease is one running turn's hold on a session.
type lease struct {
	s        *Store
	handle   string
	native   string
	n        int
	cancel   context.CancelCauseFunc
	degraded bool
	done     chan struct{}
	endOnce  sync.Once

	mu      sync.Mutex
	buf     bytes.Buffer   // redacted text not yet written
	red     io.WriteCloser // answer redactor writing into buf
	part    int
	size    int
	failed  bool // a chunk write failed: stop streaming to the archive
	kick    chan struct{}
	stop    chan struct{}
	stopped chan struct{}
}

func (s *Store) newLease(handle, native string, n int, cancel context.CancelCauseFunc) *lease {
	l := &lease{s: s, handle: handle, native: native, n: n, cancel: cancel, done: make(chan struct{}),
		kick: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	l.red = s.answer.Writer(&l.buf)
	return l
}

func (l *lease) Handle() string   { return l.handle }
func (l *lease) NativeID() string { return l.native }
func (l *lease) Turn() int        { return l.n }

// Delta buffers redacted text in memory; the flusher writes it. It never
// blocks on the database.
func (l *lease) Delta(text string) {
	if l.degraded || l.red == nil {
		return
	}
	l.mu.Lock()
	if !l.failed && l.size+len(text) <= maxStreamBytes {
		l.size += len(text)
		l.red.Write([]byte(text))
	}
	full := l.buf.Len() >= flushBytes
	l.mu.Unlock()
	if full {
		select {
		case l.kick <- struct{}{}:
		default:
		}
	}
}

// start runs the flusher: chunks every FlushEvery or flushBytes, and the
// cross-process cancel flag every pollEvery.
func (l *lease) start() {
	go func() {
		defer close(l.stopped)
		t := time.NewTicker(pollEvery)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case <-l.stop:
				return
			case <-l.kick:
				l.flush(context.Background())
				last = time.Now()
			case <-t.C:
				if time.Since(last) >= l.s.opts.FlushEvery {
					l.flush(context.Background())
					last = time.Now()
				}
				l.pollCancel()
			}
		}
	}()
}

// flush writes the buffered text as the next delta chunk.
func (l *lease) flush(ctx context.Context) {
	l.mu.Lock()
	if l.buf.Len() == 0 || l.failed {
		l.mu.Unlock()
		return
	}
	body := l.buf.String()
	l.buf.Reset()
	l.part++
	part := l.part
	l.mu.Unlock()
	_, err := l.s.db.ExecContext(ctx, `INSERT INTO deltas(handle, turn, part, body) VALUES(?, ?, ?, ?)`, l.handle, l.n, part, body)
	if err != nil {
		l.mu.Lock()
		l.failed = true
		l.mu.Unlock()
		l.s.log.Warn("history delta not archived", "error", err.Error())
	}
}

// pollCancel ends the turn when another process asked for it.
func (l *lease) pollCancel() {
	var req bool
	err := l.s.db.QueryRow(`SELECT cancel_req FROM sessions WHERE handle = ?`, l.handle).Scan(&req)
	if err == nil && req && l.cancel != nil {
		l.cancel(errCancelled)
	}
}

// End implements [turn.Lease]: it materializes the answer, records the
// turn's status and releases the lease, in one transaction.
func (l *lease) End(ctx context.Context, e turn.End) (warning string) {
	l.endOnce.Do(func() { warning = l.end(ctx, e) })
	return warning
}

func (l *lease) end(ctx context.Context, e turn.End) string {
	defer close(l.done)
	defer l.s.untrack(l)
	if l.degraded {
		l.s.bestEffortNative(ctx, l, e)
		return warnUnavailable
	}
	close(l.stop)
	<-l.stopped
	body, complete := l.final(ctx, e)
	if err := l.s.finish(ctx, l, e, body, complete); err != nil {
		l.s.log.Warn("history end not archived", "error", err.Error())
		l.s.releaseOnly(ctx, l, e)
		return warnEndFailed
	}
	return ""
}

// final returns the message to keep: the redacted answer, or what was
// streamed before a failure.
func (l *lease) final(ctx context.Context, e turn.End) (string, bool) {
	if e.Status == turn.Completed {
		return e.Output, true
	}
	l.mu.Lock()
	l.red.Close()
	rest := l.buf.String()
	l.mu.Unlock()
	stored, err := streamed(ctx, l.s.db, l.handle, l.n)
	if err != nil {
		return rest, false
	}
	return stored + rest, false
}

// noneLease is session_mode none: no handle, nothing kept.
type noneLease struct{}

func (noneLease) Handle() string                       { return "" }
func (noneLease) NativeID() string                     { return "" }
func (noneLease) Turn() int                            { return 0 }
func (noneLease) Delta(string)                         {}
func (noneLease) End(context.Context, turn.End) string { return "" }

// degraded returns a lease for a turn that runs while the archive cannot
// be written. A given handle must still be readable and usable.
func (s *Store) degraded(ctx context.Context, b turn.Begin, cause error) (turn.Lease, error) {
	s.log.Warn("session archive unavailable; the turn runs unarchived", "error", cause.Error())
	l := &lease{s: s, degraded: true, cancel: b.Cancel, done: make(chan struct{})}
	if b.Handle == "" {
		return l, nil
	}
	r, err := loadRow(ctx, s.db, b.Handle)
	if err != nil {
		var fe *fault.Error
		if errors.As(err, &fe) {
			return nil, err
		}
		return nil, fault.Wrap(fault.HistoryError, "session.unreadable",
			"The session archive cannot be read; retry without session_handle.", err)
	}
	if err := s.usable(b.Handle, r, b); err != nil {
		return nil, err
	}
	l.handle, l.native, l.n = b.Handle, r.native, r.turns+1
	if err := s.track(l); err != nil {
		return nil, err
	}
	return l, nil
}
