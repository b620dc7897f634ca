package governor

import (
	"context"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/review"
	"github.com/coagent8/coagent8/internal/verify"
)

// checkRun is the user's configured checks (config.json verify.commands)
// running in the task sandbox beside the review turn (issue 8). The
// commands come only from the configuration file, never from arguments
// run_checks can only switch them off.
type checkRun struct {
	done   chan struct{}
	cancel context.CancelFunc
	checks []verify.Check
	// note says why no check ran (bad configuration, no sandbox).
	note string
}

// startChecks starts the configured checks on the workspace unless want
// is false. It returns nil when nothing is configured and want is nil.
func (g *Governor) startChecks(ctx context.Context, workspace string, want *bool) *checkRun {
	if want != nil && !*want {
		return nil
	}
	set, note := g.verifySet()
	if note == "" && len(set.Commands) == 0 {
		if want == nil {
			return nil
		}
		note = "run_checks is true but no checks are configured (verify.commands in the coagent8 configuration)"
	}
	if note == "" && g.verifier == nil {
		note = "configured checks were not run: this server has no task sandbox"
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &checkRun{done: make(chan struct{}), cancel: cancel, note: note}
	go func() {
		defer close(r.done)
		// A panic in the checks is reported as checks not run, like any
		// other reason they could not run; the review goes on.
		defer g.guard.Recover("review checks", func(e error) { r.checks, r.note = nil, "configured checks were not run: "+e.Error() })
		if r.note == "" {
			r.checks = g.verifier.Run(ctx, workspace, set)
		}
	}()
	return r
}

// verifySet reads the verify section now (edits apply to the next review,
// like governance) and resolves its programs; a problem becomes the note.
func (g *Governor) verifySet() (config.Verify, string) {
	cfg, _ := g.loadConfig()
	set, err := cfg.Verify, cfg.VerifyErr()
	if err == nil && len(set.Commands) > 0 {
		set, err = set.Resolve(g.env)
	}
	if err != nil {
		return config.Verify{}, g.diag.String("configured checks were not run: " + err.Error())
	}
	return set, ""
}

// stop cancels checks whose review will not be gated (the turn was
// refused or needs input) and waits for the sandboxes to end.
func (r *checkRun) stop() {
	if r != nil {
		r.cancel()
		<-r.done
	}
}

// applyChecks waits for the checks and puts their real outcome next to
// the model's claims: every check in Checks, a warning where a claim and a
// result disagree, and BLOCKED with verify.ReasonFailed when a check
// failed under an otherwise READY review.
func applyChecks(o ReviewOutcome, r *checkRun) ReviewOutcome {
	if r == nil {
		return o
	}
	<-r.done
	r.cancel()
	if r.note != "" {
		o.Warnings = append(o.Warnings, r.note)
		return o
	}
	o.Checks = r.checks
	j := verify.Judge(r.checks, o.Review.Envelope.Checks)
	o.Warnings = append(o.Warnings, j.Warnings...)
	if j.Failed && o.Error == nil {
		res := review.Block(o.Review.Result, verify.ReasonFailed)
		o.Review.Result = res
		o.Output, o.Verdict, o.Reason = res.Text, string(res.Verdict), res.Reason
	}
	return o
}
