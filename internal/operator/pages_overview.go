package operator

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/coagent8/coagent8/internal/doctor"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
)

// lifecycleActions are the component lifecycle operations the overview
// names. Each refuses.
var lifecycleActions = []string{"stop", "restart", "retire"}

type overviewData struct {
	Report    *doctor.Report
	Sections  map[string]string // doctor section name → indented JSON
	ProbedAt  time.Time
	Probing   bool
	Probes    bool // a doctor is configured
	Lifecycle []string
	Events    int
	Refusals  int
}

func (s *Server) pageOverview(w http.ResponseWriter, r *http.Request) {
	s.show(w, r, "overview", http.StatusOK, page{Data: s.overviewData()})
}

func (s *Server) overviewData() overviewData {
	rep, at, probing := s.over.get()
	d := overviewData{ProbedAt: at, Probing: probing, Probes: s.opts.Doctor != nil, Lifecycle: lifecycleActions,
		Sections: map[string]string{}}
	if rep != nil {
		c := *rep
		d.Report = &c
		for k, v := range rep.Sections {
			b, _ := json.MarshalIndent(v, "", "  ")
			d.Sections[k] = string(b)
		}
	}
	_, d.Refusals = s.tail.newest(0, func(e *event.Event) bool { return e.Type == event.TypeRefusal })
	d.Events = s.tail.kept()
	return d
}

// postRefresh is POST /overview/refresh: probe again, in the background
// (the page updates live when the report is in).
func (s *Server) postRefresh(w http.ResponseWriter, r *http.Request) {
	go s.over.refresh(context.WithoutCancel(r.Context()))
	s.show(w, r, "overview", http.StatusAccepted, page{Notice: "Probing the backends again; this page updates when done.",
		Data: s.overviewData()})
}

// postLifecycle is POST /lifecycle/{action}: every lifecycle operation on
// a running coagent8 component refuses with LIFECYCLE_UNAVAILABLE until a
// qualified lifecycle passage exists (seed 001 "Local installation-stop
// admission", R-097). The refusal is a security event.
func (s *Server) postLifecycle(w http.ResponseWriter, r *http.Request) {
	action := bounded(r.PathValue("action"), 32)
	err := fault.New(fault.LifecycleUnavailable, "lifecycle.unqualified",
		"Stopping, restarting or retiring a running coagent8 component is not available: no qualified lifecycle passage exists yet. Nothing was stopped.").
		With("action", action)
	_ = s.opts.Events.Record(event.Event{Type: event.TypeRefusal, Code: string(err.Code), Reason: err.Reason, Rule: "operator",
		IDs: map[string]string{"action": action}})
	s.fail(w, r, "result", err)
}
