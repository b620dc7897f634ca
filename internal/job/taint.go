package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
)

// TypeCompromise is the security event type of a quarantine (the gate's
// gate.TypeCompromise, restated: the gate's own containment event and the
// quarantine that answers it are one kind).
const TypeCompromise event.Type = "compromise"

// ReasonQuarantineFailed is the refusal event's reason of a quarantine
// that did not complete (the error says why).
const ReasonQuarantineFailed = "quarantine.failed"

// Reasons of a quarantine (issue 16 scope 7).
const (
	// ReasonQuarantined is the job reason after [Store.Quarantine]; the
	// trigger is in the evidence.
	ReasonQuarantined = "quarantine.compromise"
	// ReasonRevoke is the refusal when the job's grants could not be
	// revoked: nothing else was done.
	ReasonRevoke = "quarantine.revoke"
)

// Evidence limits: the record stays small and carries only ids and codes.
const (
	maxEvidenceGrants = 64
	maxEvidenceText   = 200
)

// Revoker revokes every live grant of a job and returns their ids
// (*gate.Gate's RevokeJob).
type Revoker interface {
	RevokeJob(ctx context.Context, job string) ([]string, error)
}

// Containment is what [Store.Quarantine] acts through.
type Containment struct {
	// Revoker is required: revocation comes first, and a job whose grants
	// could not be revoked is not reported quarantined.
	Revoker Revoker
	// End ends the job's process tree when it is running (the delegate
	// path passes its job's cancel, which ends the sandbox). nil when the
	// caller holds no handle on the tree (another process, the terminal):
	// the revoked grants then leave the tree no network, and the result
	// says the tree was not ended here.
	End func(ctx context.Context, j Job) error
	// Trigger names why, as a code (e.g. "operator", or a gate signal
	// such as "compromise.unadmitted_route"); Actor who. Both are cut to
	// 200 bytes and must not carry secrets: they are stored as given.
	Trigger, Actor string
	// Events receives the quarantine's one security event: a
	// [TypeCompromise] event with reason [ReasonQuarantined] and the ids
	// (job, trigger, actor, revoked grants), or a refusal event with
	// reason [ReasonQuarantineFailed] when it did not complete. Required:
	// the terminal's `coagent8 quarantine` and a containment event during
	// a job both answer through Quarantine, and both leave the event.
	Events event.Sink
}

// Evidence is the bounded, secret-free record of a quarantine: ids,
// states and codes only, never request or candidate bytes.
type Evidence struct {
	Trigger       string   `json:"trigger"`
	Actor         string   `json:"actor"`
	At            int64    `json:"at_unix_ms"`
	PriorState    string   `json:"prior_state"`
	RevokedGrants []string `json:"revoked_grants"`
	// TreeEnded reports whether End ran and succeeded; EndError is its
	// fault reason when it failed.
	TreeEnded bool   `json:"tree_ended"`
	EndError  string `json:"end_error,omitempty"`
	// SupervisorAlive reports whether the recorded supervisor was still
	// running (pid and start time match) when the job was quarantined.
	SupervisorAlive bool `json:"supervisor_alive"`
}

// quarantinable are the states Quarantine taints. An admitted, rejected
// or expired job has no candidate left to taint: its grants are still
// revoked and the refusal names its state.
var quarantinable = []State{Running, Succeeded, Tainted, Failed, Cancelled}

// Quarantine is the compromise response for job id (issue 16 scope 7): it
// revokes every grant of the job, ends its tree when c.End is set and the
// job is running, and taints the job — its candidate and artifacts stay
// stored but are admissible only with the taint acknowledged
// (admission's "tainted") — with reason [ReasonQuarantined] and the
// evidence. Quarantining a tainted job again replaces its evidence.
// A job quarantined while running keeps its place for the candidate:
// [Store.Attach] still stores it, and the job stays tainted.
// Errors: INVALID_INPUT job.unknown; PROCESS_ERROR quarantine.revoke (the
// grants could not be revoked; the job is unchanged); INVALID_INPUT
// job.state for an admitted, rejected or expired job (after revoking).
func (s *Store) Quarantine(ctx context.Context, id string, c Containment) (Evidence, error) {
	if c.Revoker == nil || c.Events == nil {
		return Evidence{}, errors.New("job: Quarantine needs a Revoker and an event sink")
	}
	ev, err := s.quarantine(ctx, id, c)
	e := event.Event{Type: TypeCompromise, Reason: ReasonQuarantined, Detail: fmt.Sprintf("revoked %d grant(s); tree ended: %t", len(ev.RevokedGrants), ev.TreeEnded),
		IDs: map[string]string{"job": bounded(id), "trigger": ev.Trigger, "actor": ev.Actor, "grants": strings.Join(ev.RevokedGrants, ",")}}
	if err != nil {
		e.Type, e.Reason, e.Code, e.Detail = event.TypeRefusal, ReasonQuarantineFailed, string(fault.From(err).Code), fault.From(err).Reason
		e.IDs["trigger"], e.IDs["actor"] = bounded(c.Trigger), bounded(c.Actor)
	}
	if rerr := c.Events.Record(e); rerr != nil && err == nil {
		// The job is tainted and its grants revoked; only the record is
		// missing, and that must not pass silently.
		err = fault.Wrap(fault.HistoryError, ReasonQuarantineFailed, "The job was quarantined but its security event could not be recorded.", rerr)
	}
	return ev, err
}

func (s *Store) quarantine(ctx context.Context, id string, c Containment) (Evidence, error) {
	j, err := s.Get(ctx, id)
	if err != nil {
		return Evidence{}, err
	}
	ids, err := c.Revoker.RevokeJob(ctx, id)
	if err != nil {
		return Evidence{}, fault.Wrap(fault.ProcessError, ReasonRevoke, "The job's grants could not be revoked; nothing else was done.", err).With("job", id)
	}
	ev := Evidence{Trigger: bounded(c.Trigger), Actor: bounded(c.Actor), At: s.now().UnixMilli(),
		PriorState: j.State.String(), RevokedGrants: boundedIDs(ids), SupervisorAlive: alive(j.SupervisorPID, j.SupervisorStart)}
	if !slices.Contains(quarantinable, j.State) {
		return ev, StateError(j)
	}
	if j.State == Running && c.End != nil {
		if err := c.End(ctx, j); err != nil {
			ev.EndError = fault.From(err).Reason
		} else {
			ev.TreeEnded = true
		}
	}
	return ev, s.taint(ctx, id, ev)
}

// taint moves job id to tainted with the evidence, from any state
// Quarantine accepts (compare-and-set: a job admitted meanwhile is
// refused).
func (s *Store) taint(ctx context.Context, id string, ev Evidence) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("job: evidence: %w", err)
	}
	q := `UPDATE jobs SET state='tainted', reason=?, evidence=?, updated_at=? WHERE id=? AND state IN (` +
		placeholders(len(quarantinable)) + `)`
	args := []any{ReasonQuarantined, string(b), s.now().UnixMilli(), id}
	for _, st := range quarantinable {
		args = append(args, st.String())
	}
	res, err := s.db.ExecContext(ctx, q, args...)
	return s.changed(ctx, id, res, err)
}

// QuarantineEvidence returns the evidence of job id's last quarantine;
// ok is false when it was never quarantined.
func (s *Store) QuarantineEvidence(ctx context.Context, id string) (ev Evidence, ok bool, err error) {
	var raw string
	if err := s.db.QueryRowContext(ctx, `SELECT evidence FROM jobs WHERE id=?`, id).Scan(&raw); err != nil {
		if _, gerr := s.Get(ctx, id); gerr != nil {
			return ev, false, gerr
		}
		return ev, false, storeError(err)
	}
	if raw == "" {
		return ev, false, nil
	}
	if err := json.Unmarshal([]byte(raw), &ev); err != nil {
		return ev, false, storeError(err)
	}
	return ev, true, nil
}

func bounded(s string) string {
	if len(s) > maxEvidenceText {
		return s[:maxEvidenceText]
	}
	return s
}

func boundedIDs(ids []string) []string {
	out := make([]string, 0, min(len(ids), maxEvidenceGrants))
	for _, id := range ids[:min(len(ids), maxEvidenceGrants)] {
		out = append(out, bounded(id))
	}
	return out
}
