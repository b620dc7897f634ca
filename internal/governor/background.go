package governor

import (
	"context"
	"sync"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/turn"
)

type started struct {
	handle string
	turn   int
}

// background starts the turn detached from ctx (the caller returns at
// once; cancel and server exit still end the turn) and returns a running
// outcome, or the failure if the turn never started. finished, if set,
// receives the final outcome.
func (g *Governor) background(ctx context.Context, treq turn.Request, finished func(turn.Outcome)) turn.Outcome {
	if treq.SessionMode == "none" {
		return g.runner.Failure(treq, fault.New(fault.InvalidInput, "wait.needs_session",
			"wait:false needs a session to poll: use session_mode new or auto."))
	}
	st := make(chan started, 1)
	out := make(chan turn.Outcome, 1)
	bind := treq.Started // the kernel launcher learns its session (contain)
	treq.Started = func(h string, n int) {
		if bind != nil {
			bind(h, n)
		}
		st <- started{h, n}
	}
	var once sync.Once
	deliver := func(o turn.Outcome) {
		once.Do(func() {
			defer func() { out <- o }() // the caller waits on out even if finished panics
			if finished != nil {
				finished(o)
			}
		})
	}
	// A panic in the turn ends it failed (PROCESS_ERROR internal.panic),
	// recorded as its final outcome; the process and other turns go on.
	g.guard.Go("background turn", func() {
		o := g.runner.Run(context.WithoutCancel(ctx), treq)
		g.explainAuth(&o, treq.Backend)
		deliver(o)
	}, func(e error) { deliver(g.runner.Failure(treq, e)) })
	select {
	case b := <-st:
		return runningOutcome(treq, b)
	case o := <-out:
		// A turn that started and already ended has both channels ready and
		// select picks at random; the answer must not depend on the race:
		// once a handle exists, wait:false always answers running with it.
		select {
		case b := <-st:
			return runningOutcome(treq, b)
		default:
			return o
		}
	}
}

// runningOutcome is the wait:false answer for a started turn: its handle and turn
// number, status running.
func runningOutcome(treq turn.Request, b started) turn.Outcome {
	provider := treq.Backend
	return turn.Outcome{SchemaVersion: 1, Provider: &provider, Status: turn.Running, SessionHandle: &b.handle,
		Turn: b.turn, Verdict: turn.VerdictNotApplicable, ModelRequested: treq.Model}
}
