package mcpserver

import (
	"context"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/turn"
)

// maxJobs bounds the finished background outcomes kept in memory; older
// ones are still answered from the session archive.
const maxJobs = 256

// jobs keeps the full outcome of background turns run by this process,
// keyed by handle and turn, for `session result`.
type jobs struct {
	mu    sync.Mutex
	done  map[string]turn.Outcome
	order []string
}

func newJobs() *jobs { return &jobs{done: map[string]turn.Outcome{}} }

func jobKey(handle string, n int) string { return handle + "#" + strconv.Itoa(n) }

func (j *jobs) put(key string, o turn.Outcome) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.order) == maxJobs {
		delete(j.done, j.order[0])
		j.order = j.order[1:]
	}
	j.done[key] = o
	j.order = append(j.order, key)
}

func (j *jobs) get(key string) (turn.Outcome, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	o, ok := j.done[key]
	return o, ok
}

type backgroundKey struct{}

// inBackground marks a tool call made with wait:false.
func inBackground(ctx context.Context) context.Context {
	return context.WithValue(ctx, backgroundKey{}, true)
}

func isBackground(ctx context.Context) bool {
	b, _ := ctx.Value(backgroundKey{}).(bool)
	return b
}

// execute runs an approved turn: in the foreground with progress
// notifications when the client sent a progress token, or, for wait:false,
// in the background, answering with the handle as soon as the lease is
// held (issue 6 §5).
func (s *Server) execute(ctx context.Context, req *mcp.CallToolRequest, treq turn.Request) turn.Outcome {
	if isBackground(ctx) {
		return s.background(ctx, treq)
	}
	stop := s.progress(ctx, req, &treq)
	defer stop()
	return s.runner.Run(ctx, treq)
}

type started struct {
	handle string
	turn   int
}

// background starts the turn detached from the tool call's context (the
// call ends at once; cancel and server exit still end the turn) and
// returns a running outcome, or the failure if the turn never started.
func (s *Server) background(ctx context.Context, treq turn.Request) turn.Outcome {
	if treq.SessionMode == "none" {
		return s.runner.Failure(treq, fault.New(fault.InvalidInput, "wait.needs_session",
			"wait:false needs a session to poll: use session_mode new or auto."))
	}
	st := make(chan started, 1)
	out := make(chan turn.Outcome, 1)
	treq.Started = func(h string, n int) { st <- started{h, n} }
	go func() {
		o := s.runner.Run(context.WithoutCancel(ctx), treq)
		if o.SessionHandle != nil {
			s.jobs.put(jobKey(*o.SessionHandle, o.Turn), o)
		}
		out <- o
	}()
	select {
	case b := <-st:
		provider := treq.Backend
		return turn.Outcome{SchemaVersion: 1, Provider: &provider, Status: turn.Running, SessionHandle: &b.handle,
			Turn: b.turn, Verdict: turn.VerdictNotApplicable, ModelRequested: treq.Model}
	case o := <-out:
		return o
	}
}
