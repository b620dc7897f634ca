package sandbox

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
)

// ReasonSinkUnwritable is the refusal reason when the configured event
// sink cannot record an admission, a qualification or a receipt (R-197:
// "make the audit sink unwritable → sandbox job refused").
const ReasonSinkUnwritable = "audit.sink_unwritable"

// record writes e to the configured sink. Without a sink it does nothing;
// with one, a failed write is a SANDBOX_UNAVAILABLE refusal: execution
// without its audit record is not admitted.
func (s *Sandbox) record(e event.Event) error {
	if s.cfg.Events == nil {
		return nil
	}
	if err := s.cfg.Events.Record(e); err != nil {
		return fault.Wrap(fault.SandboxUnavailable, ReasonSinkUnwritable,
			"the task sandbox is unavailable: its security event log cannot be written", err).With("missing", "a writable audit sink")
	}
	return nil
}

// refuse records err as a refusal event and returns it unchanged. A failed
// write is not reported over err: the run is refused either way.
func (s *Sandbox) refuse(err error) error {
	fe := fault.From(err)
	detail := fe.Details["missing"]
	_ = s.record(event.Event{Type: event.TypeRefusal, Code: string(fe.Code), Reason: fe.Reason, Rule: "sandbox", Detail: detail})
	return err
}

// admissionEvent is recorded before the command starts. It names the
// executable, never the arguments (which may carry values).
func admissionEvent(j job, q *Qualification) event.Event {
	return event.Event{Type: event.TypeDecision, Reason: "sandbox.admitted", Rule: "sandbox",
		IDs:    map[string]string{"job_id": j.id, "binary_digest": q.BinaryDigest, "policy_digest": q.PolicyDigest},
		Detail: "executable " + j.path}
}

// receiptEvent summarizes a receipt: identifiers, exit classification and
// whether the tree was verified empty; no output, arguments or env values.
func receiptEvent(r Receipt) event.Event {
	ids := map[string]string{"job_id": r.JobID, "binary_digest": r.BinaryDigest, "policy_digest": r.PolicyDigest,
		"exit_class": r.Exit.Class.String(), "exit_code": strconv.Itoa(r.Exit.Code)}
	return event.Event{Type: event.TypeExecution, Reason: "sandbox.run." + r.Exit.Class.String(), Rule: "sandbox", IDs: ids,
		Detail: fmt.Sprintf("tree_empty=%t run_ms=%.1f memory_peak_bytes=%d", r.TreeEmpty, r.RunMS, r.Observed.MemoryPeakBytes)}
}

// qualificationEvent records a qualification result with the failed
// probes' names.
func qualificationEvent(q *Qualification) event.Event {
	e := event.Event{Type: event.TypeVerification, Reason: "sandbox.qualified", Rule: "sandbox",
		IDs: map[string]string{"binary_digest": q.BinaryDigest, "policy_digest": q.PolicyDigest,
			"kernel": q.KernelRelease, "landlock_abi": strconv.Itoa(q.LandlockABI)}}
	if !q.Passed {
		e.Reason, e.Detail = "sandbox.qualification_failed", "failed probes: "+strings.Join(q.Failed(), ", ")
	}
	return e
}
