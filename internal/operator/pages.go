package operator

import (
	"context"
	"database/sql"
	"net/http"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
)

// pageLimit bounds the rows a page lists; totals are shown beside.
const pageLimit = 200

// page is what every page template gets.
type page struct {
	Nav    string
	CSRF   string
	Now    time.Time
	Error  *ErrorView
	Notice string
	Data   any
}

// ErrorView is a typed error rendered readably: code, reason, message.
type ErrorView struct {
	Code, Reason, Message string
}

// show redacts data and renders it as page name.
func (s *Server) show(w http.ResponseWriter, r *http.Request, name string, status int, p page) {
	p.Nav, p.CSRF, p.Now = name, s.csrf, s.opts.Now().UTC()
	scrub(s.red, &p)
	p.CSRF = s.csrf // scrub may not alter the token, but it is never data
	s.view.render(w, r, name, status, p)
}

// fail renders err as a typed error on page name.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, name string, err error) {
	fe := fault.From(err)
	status := statusOf(fe.Code)
	// An id in the URL that names no job is the visitor's "not found",
	// not a page failure: 404, and no warning in the log (it was a 400
	// logged as "operator: page failed").
	unknown := fe.Reason == reasonJobUnknown || fe.Reason == reasonCandidateUnknown
	if unknown {
		status = http.StatusNotFound
	}
	if fe.Cause() != nil && !unknown {
		s.opts.Logger.Warn("operator: page failed", "page", name, "reason", fe.Reason, "error", fe.Cause().Error())
	}
	s.show(w, r, name, status, page{Error: &ErrorView{Code: string(fe.Code), Reason: fe.Reason, Message: fe.Message}})
}

// The reasons of an id that names no job ([job.ReasonUnknown], kept as a
// string so the dashboard does not import the job store) or no candidate.
const (
	reasonJobUnknown       = "job.unknown"
	reasonCandidateUnknown = "candidate.unknown"
)

// statusOf maps a code to the HTTP status its refusal is shown with
// (requirements §0.4: plain statuses, the reason in the body).
func statusOf(c fault.Code) int {
	switch c {
	case fault.InvalidInput:
		return http.StatusBadRequest
	case fault.PolicyDenied:
		return http.StatusForbidden
	case fault.SessionInvalid:
		return http.StatusNotFound
	case fault.LifecycleUnavailable, fault.SessionBusy:
		return http.StatusConflict
	case fault.Unsupported:
		return http.StatusNotImplemented
	case fault.ProcessError, fault.HistoryError:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// read runs fn with the state database handle and its table set.
func (s *Server) read(ctx context.Context, fn func(db *sql.DB, has map[string]bool) error) error {
	db := s.db.SQL()
	has, err := tables(ctx, db)
	if err != nil {
		return err
	}
	return fn(db, has)
}
