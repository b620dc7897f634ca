package mcpserver

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/turn"
)

// Progress cadence (contract.md §5): at most one notification per
// progressEvery, a heartbeat after heartbeatAfter of silence, messages
// redacted and cut to progressBytes.
const (
	progressEvery  = 500 * time.Millisecond
	heartbeatAfter = 10 * time.Second
	progressBytes  = 512
)

// progress sends notifications/progress while a turn runs, only when the
// client asked for them with a progress token (hosts reset their call
// timeout on progress). It returns the function that stops and flushes it.
func (s *Server) progress(ctx context.Context, req *mcp.CallToolRequest, treq *turn.Request) (stop func()) {
	if req == nil || req.Session == nil || req.Params == nil || req.Params.GetProgressToken() == nil {
		return func() {}
	}
	p := &reporter{s: s, ctx: ctx, session: req.Session, token: req.Params.GetProgressToken(), start: time.Now(),
		done: make(chan struct{}), finished: make(chan struct{})}
	prev := treq.Progress
	treq.Progress = func(msg string) {
		p.set(msg)
		if prev != nil {
			prev(msg)
		}
	}
	treq.Observer = &countingObserver{next: treq.Observer, p: p}
	// A panic in the notifier ends the notifications, not the turn.
	s.guard.Go("progress notifications", p.loop, nil)
	return p.stop
}

type reporter struct {
	s        *Server
	ctx      context.Context
	session  *mcp.ServerSession
	token    any
	start    time.Time
	done     chan struct{}
	finished chan struct{}

	mu       sync.Mutex
	msg      string
	bytes    int
	sent     string
	lastSent time.Time
	n        float64
}

func (p *reporter) set(msg string) {
	p.mu.Lock()
	p.msg = msg
	p.mu.Unlock()
}

func (p *reporter) add(n int) {
	p.mu.Lock()
	p.bytes += n
	p.mu.Unlock()
}

func (p *reporter) loop() {
	defer close(p.finished)
	t := time.NewTicker(progressEvery)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			p.tick(true)
			return
		case <-p.ctx.Done():
			return
		case <-t.C:
			p.tick(false)
		}
	}
}

// tick sends the current status if it changed, else a heartbeat after
// heartbeatAfter of silence; final flushes an unsent change.
func (p *reporter) tick(final bool) {
	p.mu.Lock()
	line := p.line()
	changed := line != p.sent
	silent := time.Since(p.lastSent) >= heartbeatAfter
	if (!changed && !silent) || (final && !changed) {
		p.mu.Unlock()
		return
	}
	if !changed {
		line = fmt.Sprintf("still running (%ds)", int(time.Since(p.start).Seconds()))
	}
	p.n++
	n := p.n
	p.sent, p.lastSent = p.line(), time.Now()
	p.mu.Unlock()
	msg, _ := p.s.diag.Bound(line, progressBytes)
	_ = p.session.NotifyProgress(p.ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: n, Message: msg})
}

// line is the status text: the last activity and the streamed size.
func (p *reporter) line() string {
	switch {
	case p.msg != "" && p.bytes > 0:
		return fmt.Sprintf("%s · %d bytes streamed", p.msg, p.bytes)
	case p.bytes > 0:
		return fmt.Sprintf("answering · %d bytes streamed", p.bytes)
	case p.msg != "":
		return p.msg
	}
	return "turn started"
}

func (p *reporter) stop() {
	close(p.done)
	<-p.finished
}

// countingObserver counts streamed bytes for progress and passes events on.
type countingObserver struct {
	next interface {
		Delta(string)
		Activity(kind, name string)
		Warning(string)
	}
	p *reporter
}

func (o *countingObserver) Delta(text string) {
	o.p.add(len(text))
	if o.next != nil {
		o.next.Delta(text)
	}
}

func (o *countingObserver) Activity(kind, name string) {
	if o.next != nil {
		o.next.Activity(kind, name)
	}
}

func (o *countingObserver) Warning(msg string) {
	if o.next != nil {
		o.next.Warning(msg)
	}
}
