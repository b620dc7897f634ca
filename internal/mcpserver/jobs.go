package mcpserver

import (
	"context"
	"strconv"
	"sync"

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

// finished keeps the outcome of a background turn for `session result`.
func (s *Server) finished(o turn.Outcome) {
	if o.SessionHandle != nil {
		s.jobs.put(jobKey(*o.SessionHandle, o.Turn), o)
	}
}
