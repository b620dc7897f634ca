package gate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/coagent8/coagent8/internal/egress"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/store"
)

// TypeCompromise is the event type of a gate-observed containment signal
// (seed 001 "Refusal, compromise, and evidence"; ).
const TypeCompromise event.Type = "compromise"

// Containment signals (issue 18 scope 6): each revokes every grant of
// the job and records a [TypeCompromise] event.
const (
	SignalRoute      = "compromise.unadmitted_route" // a live phantom on a route outside the allowlist
	SignalCredential = "compromise.credential_in_request"
	SignalOtherJob   = "compromise.phantom_other_job" // a phantom presented to another job's gate
)

// RevokeJob revokes every live grant of job at once and cuts their
// streams (in this gate now, in other gates within their WatchInterval).
// It returns the ids it revoked (none is not an error: the job may have
// no live grant). Issue 18 scope 6; `coagent8 gate revoke --job`.
func (g *Gate) RevokeJob(ctx context.Context, job string) ([]string, error) {
	ids, err := g.revokeJob(ctx, job)
	if err != nil {
		return nil, err
	}
	g.flushSuppressed(&job)
	return ids, nil
}

// revokeJob is [Gate.RevokeJob] without its flush of the job's
// suppressed counts.
func (g *Gate) revokeJob(ctx context.Context, job string) ([]string, error) {
	if !validJobID(job) {
		return nil, fault.New(fault.InvalidInput, "gate.job", "job id must match [A-Za-z0-9][A-Za-z0-9._:-]{0,127} (a letter or digit first)")
	}
	ids, err := g.ledger.revokeJob(ctx, job)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		g.cutGrant(id, fmt.Errorf("job %s revoked", job))
		g.record(event.Event{Type: event.TypeDecision, Reason: "grant." + string(Revoked), IDs: map[string]string{"grant": id, "job": job}})
	}
	return ids, nil
}

// HasJob reports whether any grant, in any state, names job: `gate
// revoke --job` refuses a job id no grant names, since revoking nothing
// there is a mistyped id, not containment.
func (g *Gate) HasJob(ctx context.Context, job string) (bool, error) {
	return g.ledger.hasJob(ctx, job)
}

// hasJob reports whether a grant row names job.
func (l *ledger) hasJob(ctx context.Context, job string) (bool, error) {
	var one int
	err := l.db.QueryRowContext(ctx, `SELECT 1 FROM gate_grants WHERE job = ? LIMIT 1`, job).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read grants of job: %w", err)
	}
	return true, nil
}

// jobKey carries the job a [Gate.ForJob] handler serves.
type jobKey struct{}

// ForJob returns a handler serving requests as g does, restricted to the
// grants of job as a per-job gate ([Options.Job]) is: a phantom of
// another job's grant is refused grant.job and contains that job
// ([SignalOtherJob]). The delegate path serves each job's sandbox
// through its own ForJob handler: on the shared gate a phantom leaked
// from one job's sandbox into another's was admitted on the first job's
// budget, no containment signal (red team 3).
func (g *Gate) ForJob(job string) http.Handler { return forJob{g: g, job: job} }

// forJob is [Gate.ForJob]'s handler; [Gate.Serve] reads the job from it,
// so net/http's own refusals on the job's channel are charged to the job.
type forJob struct {
	g   *Gate
	job string
}

func (h forJob) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.g.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), jobKey{}, h.job)))
}

// otherJob reports whether grant job gr is not the one this gate, or the
// [Gate.ForJob] handler r came through, is restricted to.
func (g *Gate) otherJob(r *http.Request, gr string) bool {
	job, _ := r.Context().Value(jobKey{}).(string)
	return g.opts.Job != "" && gr != g.opts.Job || job != "" && gr != job
}

// revokeJob moves every live grant of job to revoked in one write
// transaction and returns their ids.
func (l *ledger) revokeJob(ctx context.Context, job string) ([]string, error) {
	var ids []string
	err := l.w.write(ctx, func(tx store.Tx) error {
		rows, err := tx.QueryContext(ctx, `UPDATE gate_grants SET state = ? WHERE job = ? AND state = ? RETURNING id`, Revoked, job, Live)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("revoke job: %w", err)
	}
	return ids, nil
}

// contain answers a containment signal for a's job: revoke the job's
// grants and record the compromise event (secret-free: ids and the
// signal only). A failure to revoke is recorded too, never silent.
func (g *Gate) contain(a *admission, signal string, first bool) {
	job := a.grant.Job
	ids, err := g.revokeJob(context.Background(), job)
	if len(ids) > 0 {
		// Only a grant that ended here ends the job's accounting: a
		// repeated signal of a contained job revokes nothing, and a flush
		// each time wrote a summary line per request, a flood of its own.
		g.flushSuppressed(&job)
	}
	detail := fmt.Sprintf("revoked %d grant(s) of the job", len(ids))
	if err != nil {
		detail = "revocation failed: " + g.opts.Redactor.String(err.Error())
	}
	g.recordSignal(job, first, event.Event{Type: TypeCompromise, Code: string(fault.PolicyDenied), Reason: signal, Backend: string(a.grant.Provider),
		Detail: detail, IDs: map[string]string{"grant": a.grant.ID, "job": job, "grants": strings.Join(ids, ",")}})
}

// signalOf returns the containment signal of a refusal, if any. Only
// refusals that cannot come from a well-behaved CLI count: a live
// phantom on an unadmitted route (an Upgrade is Codex's normal probe and
// does not), a credential format in the request (egress.category with a
// credential actually found; other categories are policy, not
// compromise), or a phantom of another job.
func (g *Gate) signalOf(r *http.Request, a *admission, reason string) string {
	switch {
	case reason == ReasonJob:
		return SignalOtherJob
	case reason == egress.ReasonCategory && (leakCheck{}.in(a.body) || leakCheck{}.in(headerText(a.wire))):
		return SignalCredential
	case reason == ReasonRoute || reason == ReasonPathForm:
		return g.routeSignal(r, a)
	}
	return ""
}

// routeSignal attributes an unadmitted-route request to a grant: only a
// presented phantom that maps to a grant is a signal (anonymous probes
// are refused and recorded, nothing more).
func (g *Gate) routeSignal(r *http.Request, a *admission) string {
	if _, reason := checkHeaders(r, a.route); reason != "" {
		return ""
	}
	gr, reason, _ := g.authenticate(r)
	if reason != "" {
		return ""
	}
	a.grant = gr
	return SignalRoute
}

// headerText is the forwarded header values of w, one per line.
func headerText(w wire) []byte {
	var b strings.Builder
	for _, h := range w.forward {
		if h.Value != egress.CredentialPlaceholder {
			b.WriteString(h.Value + "\n")
		}
	}
	return []byte(b.String())
}
