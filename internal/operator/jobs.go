package operator

import (
	"sort"
	"strings"
	"time"

	"github.com/coagent8/coagent8/internal/event"
)

// JobRow is one job as far as the state records it: a task-sandbox run
// (its admission and receipt events) and the provider-gate grants issued
// under its id, with their counters.
type JobRow struct {
	ID      string
	Kind    string // "sandbox", "gate" or "sandbox+gate"
	Status  string // running | live | the sandbox exit class | closed
	Started time.Time
	// Exit and Receipt summarise the sandbox receipt event (exit code,
	// tree_empty, run time, memory peak), empty while running.
	Exit, Receipt string
	Gate          *jobGrants
}

// Running reports whether the job is still going (a sandbox run without
// its receipt, or a live grant).
func (j JobRow) Running() bool { return j.Status == "running" || j.Status == "live" }

// mergeJobs joins the sandbox events and the gate's per-job counters,
// newest first, at most limit; total is how many jobs there are.
func mergeJobs(tail *eventTail, gate []jobGrants, limit int) (out []JobRow, total int) {
	byID := map[string]*JobRow{}
	tail.each(func(e *event.Event) { sandboxJob(byID, e) })
	for i := range gate {
		g := &gate[i]
		j := byID[g.Job]
		if j == nil {
			j = &JobRow{ID: g.Job, Kind: "gate", Started: g.First}
			byID[g.Job] = j
		} else {
			j.Kind = "sandbox+gate"
		}
		j.Gate = g
		if j.Status == "" || j.Kind == "gate" {
			j.Status = map[bool]string{true: "live", false: "closed"}[g.Live]
		}
	}
	for _, j := range byID {
		out = append(out, *j)
	}
	sort.Slice(out, func(a, b int) bool {
		if !out[a].Started.Equal(out[b].Started) {
			return out[a].Started.After(out[b].Started)
		}
		return out[a].ID < out[b].ID
	})
	total = len(out)
	if len(out) > limit {
		out = out[:limit]
	}
	return out, total
}

// sandboxJob folds one security event into the sandbox job it names.
func sandboxJob(byID map[string]*JobRow, e *event.Event) {
	id := e.IDs["job_id"]
	if id == "" || e.Rule != "sandbox" {
		return
	}
	j := byID[id]
	if j == nil {
		j = &JobRow{ID: id, Kind: "sandbox", Started: e.Time, Status: "running"}
		byID[id] = j
	}
	if e.Type == event.TypeExecution {
		j.Status = strings.TrimPrefix(e.Reason, "sandbox.run.")
		j.Exit = e.IDs["exit_code"]
		j.Receipt = e.Detail
	}
}
