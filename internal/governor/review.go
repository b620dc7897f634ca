package governor

import (
	"context"
	"fmt"
	"strings"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gitscope"
	"github.com/coagent8/coagent8/internal/review"
	"github.com/coagent8/coagent8/internal/turn"
	"github.com/coagent8/coagent8/internal/verify"
)

// ReviewTurn is one review for [Governor.Review].
type ReviewTurn struct {
	// Turn is the review's model turn. Its Request names backend,
	// workspace, model, effort, session and timeout; Review sets Prompt
	// and OutputSchema. A review never runs in the background.
	Turn
	// Scope is the Git scope (gitscope: "" = uncommitted).
	Scope string
	// Instructions say what to focus on ("" = the default focus).
	Instructions string
	// Number labels the State Envelope (REVIEW: n); the gate never trusts
	// it.
	Number int
	// RunChecks: nil runs the configured checks, false runs none, true
	// runs them and warns when none are configured. Commands come only
	// from the configuration.
	RunChecks *bool
}

// ReviewResult is what [Governor.Review] returns.
type ReviewResult struct {
	// Outcome is the gated review, failures included (BLOCKED with the
	// error's public message as the reason; contract.md §3). Zero when
	// Pending.
	Outcome ReviewOutcome
	// Pending is [Result.Pending]: consent was asked out of band.
	Pending bool
}

// ReviewOutcome is a review's result: the execution result of contract.md
// §2 with verdict READY|BLOCKED and reason set by the State Envelope gate,
// plus the structured review (the review tool's structuredContent).
type ReviewOutcome struct {
	turn.Outcome
	Review ReviewData `json:"review"`
	// Checks are the user's configured checks as they really ran in the
	// task sandbox (issue 8); absent when none ran.
	Checks []verify.Check `json:"checks,omitempty"`
}

// ReviewData is the gated review: the verdict the server enforced, the
// envelope the model reported (findings with severity, file, line,
// problem, evidence, fix) and the Git scope that was sent.
type ReviewData struct {
	review.Result
	// Scope is what was reviewed; nil when collection failed.
	Scope *ReviewScope `json:"scope,omitempty"`
}

// ReviewScope describes the collected Git snapshot (contract.md §4).
type ReviewScope struct {
	Description string `json:"description"`
	// Commit is the snapshot commit ("" when the repository has none yet).
	Commit string `json:"commit"`
	// Base is the merge base an uncommitted scope compared against.
	Base       string   `json:"base,omitempty"`
	Incomplete bool     `json:"incomplete"`
	Binary     []string `json:"binary,omitempty"`
	Omitted    []string `json:"omitted,omitempty"`
}

// Review collects the Git scope, runs the turn through [Governor.Run]
// with the user's checks started beside it once the turn is admitted,
// and gates the answer (a failing check blocks READY with
// verify.ReasonFailed). A refused, pending or failed turn stops the
// checks and is BLOCKED whatever they say.
func (g *Governor) Review(ctx context.Context, r ReviewTurn) ReviewResult {
	prep, err := g.prepareReview(ctx, r)
	if err != nil {
		return ReviewResult{Outcome: blockedOutcome(g.runner.Failure(r.Request, err), nil)}
	}
	// Backends that enforce a schema (Codex outputSchema) answer in JSON;
	// the others ignore it and the text envelope is the contract.
	r.Request.Prompt, r.Request.OutputSchema = prep.Prompt, prep.Schema
	r.Background = false
	ws, _ := turn.Workspace(r.Request.Workspace) // validated by prepareReview
	// The checks start only when Run attaches to the admitted turn: after
	// routing, governance and the user's answer, never while the question
	// is open or for a review the user declined, a deny rule refused or
	// an input request deferred (nothing acts before the answer). They
	// still run beside the model turn.
	var checks *checkRun
	attach := r.Attach
	r.Attach = func(treq *turn.Request) func() {
		checks = g.startChecks(ctx, ws, r.RunChecks)
		if attach != nil {
			return attach(treq)
		}
		return func() {}
	}
	res := g.Run(ctx, r.Turn)
	if res.Pending || res.Outcome.Error != nil {
		// Refused, waiting for input or failed: BLOCKED (or no review)
		// whatever the checks say, so do not keep the caller waiting.
		checks.stop()
		checks = nil
	}
	if res.Pending {
		return ReviewResult{Pending: true}
	}
	return ReviewResult{Outcome: applyChecks(gateOutcome(res.Outcome, scopeOf(prep.Snapshot)), checks)}
}

func (g *Governor) prepareReview(ctx context.Context, r ReviewTurn) (review.Request, error) {
	ws, err := turn.Workspace(r.Request.Workspace)
	if err != nil {
		return review.Request{}, err
	}
	return review.Prepare(ctx, gitscope.Options{Workspace: ws, Scope: r.Scope, Env: g.env}, r.Instructions, r.Number)
}

// gateOutcome applies the State Envelope gate to a finished turn. An
// execution error is BLOCKED with its message; an empty answer is an
// error, never a clean review (AUD-P2-2).
func gateOutcome(o turn.Outcome, scope *ReviewScope) ReviewOutcome {
	if o.Error != nil {
		return blockedOutcome(o, scope)
	}
	res, err := review.Gate(o.Output, o.Truncated)
	if err != nil {
		fe := fault.From(err)
		o.Status = turn.Failed
		o.Error = &turn.Error{Code: string(fe.Code), Message: fe.Message, Retryable: fe.Retryable, Reason: fe.Reason}
		return blockedOutcome(o, scope)
	}
	o.Output, o.Verdict, o.Reason = res.Text, string(res.Verdict), res.Reason
	if res.Envelope.Findings == nil && (res.Reason == "" || res.Reason == review.ReasonNotReady) {
		// A complete envelope listing no finding reports none; otherwise
		// "no findings parsed" stays null (unknown), never invented.
		res.Envelope.Findings = []review.Finding{}
	}
	if w := snapshotMismatch(res.Envelope.Snapshot, scope); w != "" {
		o.Warnings = append(o.Warnings, w)
	}
	return ReviewOutcome{Outcome: o, Review: ReviewData{Result: res, Scope: scope}}
}

func blockedOutcome(o turn.Outcome, scope *ReviewScope) ReviewOutcome {
	res := review.Result{Verdict: review.Blocked, Truncated: o.Truncated}
	if o.Error != nil {
		res.Reason = o.Error.Message
	}
	o.Verdict, o.Reason = string(res.Verdict), res.Reason
	return ReviewOutcome{Outcome: o, Review: ReviewData{Result: res, Scope: scope}}
}

// snapshotMismatch warns when the model's SNAPSHOT names another commit
// than the one sent (an abbreviated sha of at least 7 digits matches).
func snapshotMismatch(claimed string, scope *ReviewScope) string {
	if scope == nil || scope.Commit == "" || claimed == "" {
		return ""
	}
	if len(claimed) >= 7 && strings.HasPrefix(scope.Commit, strings.ToLower(claimed)) {
		return ""
	}
	return fmt.Sprintf("The review's SNAPSHOT %q is not the reviewed commit %s.", claimed, scope.Commit)
}

func scopeOf(s gitscope.Snapshot) *ReviewScope {
	return &ReviewScope{Description: s.Description, Commit: s.Commit, Base: s.Base, Incomplete: s.Incomplete,
		Binary: s.Binary, Omitted: s.Omitted}
}
