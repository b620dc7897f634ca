package operator

import (
	"database/sql"
	"net/http"
	"strings"

	"github.com/coagent8/coagent8/internal/event"
)

type jobsData struct {
	Jobs  []JobRow
	Total int
}

func (s *Server) pageJobs(w http.ResponseWriter, r *http.Request) {
	var d jobsData
	err := s.read(r.Context(), func(db *sql.DB, has map[string]bool) error {
		g, err := grantsByJob(r.Context(), db, has, s.opts.Now(), 5*pageLimit)
		d.Jobs, d.Total = mergeJobs(s.tail, g, pageLimit)
		return err
	})
	if err != nil {
		s.fail(w, r, "jobs", err)
		return
	}
	s.show(w, r, "jobs", http.StatusOK, page{Data: d})
}

type grantsData struct {
	Grants []GrantRow
	Total  int
}

func (s *Server) pageGrants(w http.ResponseWriter, r *http.Request) {
	var d grantsData
	err := s.read(r.Context(), func(db *sql.DB, has map[string]bool) (err error) {
		d.Grants, d.Total, err = grants(r.Context(), db, has, pageLimit)
		return err
	})
	if err != nil {
		s.fail(w, r, "grants", err)
		return
	}
	s.show(w, r, "grants", http.StatusOK, page{Data: d})
}

type egressData struct {
	Accounts  []AccountRow
	Effects   map[string]int
	Reasons   []ReasonCount
	Refusals  []DecisionRow
	Recent    []DecisionRow
	Rows      []DecisionRow // Refusals or Recent, as filtered
	OnlyDeny  bool
	Decisions int
}

func (s *Server) pageEgress(w http.ResponseWriter, r *http.Request) {
	d := egressData{OnlyDeny: r.URL.Query().Get("effect") == "deny"}
	err := s.read(r.Context(), func(db *sql.DB, has map[string]bool) (err error) {
		if err = s.tally.update(r.Context(), db, has); err != nil {
			return err
		}
		if d.Accounts, err = accounts(r.Context(), db, has); err != nil {
			return err
		}
		d.Recent, err = recentDecisions(r.Context(), db, has, pageLimit)
		return err
	})
	if err != nil {
		s.fail(w, r, "egress", err)
		return
	}
	d.Effects, d.Reasons, d.Refusals = s.tally.summary()
	d.Rows = d.Recent
	if d.OnlyDeny {
		d.Rows = d.Refusals
	}
	for _, n := range d.Effects {
		d.Decisions += n
	}
	s.show(w, r, "egress", http.StatusOK, page{Data: d})
}

// eventsData is the security events page; the filters are exact type
// and code, and a case-insensitive substring of the reason.
type eventsData struct {
	Events            []event.Event
	Matched, Kept     int
	Type, Code, Query string
	Types             []string
}

func (s *Server) pageEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := eventsData{Type: bounded(q.Get("type"), 64), Code: bounded(q.Get("code"), 64), Query: bounded(q.Get("q"), 200),
		Types: []string{string(event.TypeRefusal), string(event.TypeVerification), string(event.TypeDecision), string(event.TypeExecution)}}
	needle := strings.ToLower(d.Query)
	d.Events, d.Matched = s.tail.newest(pageLimit, func(e *event.Event) bool {
		return (d.Type == "" || string(e.Type) == d.Type) && (d.Code == "" || e.Code == d.Code) &&
			(needle == "" || strings.Contains(strings.ToLower(e.Reason), needle))
	})
	d.Kept = s.tail.kept()
	s.show(w, r, "events", http.StatusOK, page{Data: d})
}

type sessionsData struct {
	Workspaces []Workspace
}

func (s *Server) pageSessions(w http.ResponseWriter, r *http.Request) {
	var d sessionsData
	err := s.read(r.Context(), func(db *sql.DB, has map[string]bool) (err error) {
		d.Workspaces, err = sessionsByWorkspace(r.Context(), db, has, s.opts.Now(), 5*pageLimit)
		return err
	})
	if err != nil {
		s.fail(w, r, "sessions", err)
		return
	}
	s.show(w, r, "sessions", http.StatusOK, page{Data: d})
}
