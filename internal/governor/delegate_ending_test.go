package governor

import (
	"errors"
	"testing"

	"github.com/coagent8/coagent8/internal/delegation"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gate"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/sandbox"
)

// TestEnding: a job that produced no candidate ends with the state and
// reason of its real cause; a job whose time limit passed is told so, not
// "agent_cancelled" (newcomer report: a job that ran out of minutes
// against an unreachable provider said only delegate.agent_cancelled).
func TestEnding(t *testing.T) {
	ok := delegation.Result{Receipt: sandbox.Receipt{Exit: sandbox.Exit{Class: sandbox.ExitExited}}}
	killed := delegation.Result{Receipt: sandbox.Receipt{Exit: sandbox.Exit{Class: sandbox.ExitCancelled, Code: -1}}}
	spent := killed
	spent.Grant = gate.Grant{Limits: gate.Counters{Requests: 2, Tokens: 100, Spend: 10}, Used: gate.Counters{Requests: 2, Tokens: 10, Spend: 1}}
	// refusedFor is an agent that exited 1 after the gate refused its
	// last request with reason, nothing spent.
	refusedFor := func(reason string) delegation.Result {
		return delegation.Result{Receipt: sandbox.Receipt{Exit: sandbox.Exit{Class: sandbox.ExitExited, Code: 1}},
			Grant: gate.Grant{Limits: gate.Counters{Requests: 100, Tokens: 1e9, Spend: gate.USD(1)}, LastRefusal: reason}}
	}
	runErr := fault.New(fault.SandboxUnavailable, "sandbox.pin_changed", "a pinned file changed")
	tests := []struct {
		name                string
		res                 delegation.Result
		err                 error
		cancelled, timedOut bool
		wantState           job.State
		wantReason          string
		wantEnded           bool
	}{
		{"agent succeeded", ok, nil, false, false, 0, "", false},
		{"user cancelled", killed, nil, true, false, job.Cancelled, "delegate.cancelled", true},
		{"user cancelled as the limit passed", killed, nil, true, true, job.Cancelled, "delegate.cancelled", true},
		{"time limit passed", killed, nil, false, true, job.Failed, ReasonTimeLimit, true},
		{"time limit passed, the run failed with it", killed, errors.New("session cut"), false, true, job.Failed, ReasonTimeLimit, true},
		{"run failed", killed, runErr, false, false, job.Failed, "sandbox.pin_changed", true},
		{"budget used up", spent, nil, false, false, job.Failed, ReasonBudgetExhausted, true},
		{"one request above the whole budget", refusedFor(gate.ReasonRequestSpend), nil, false, false, job.Failed, ReasonBudgetBelowRequest, true},
		{"one request above the token budget", refusedFor(gate.ReasonRequestTokens), nil, false, false, job.Failed, ReasonBudgetBelowRequest, true},
		{"refused for the spend left", refusedFor(gate.ReasonBudgetSpend), nil, false, false, job.Failed, ReasonBudgetExhausted, true},
		{"refused for the requests left", refusedFor(gate.ReasonBudgetRequests), nil, false, false, job.Failed, ReasonBudgetExhausted, true},
		{"refused for the tokens left", refusedFor(gate.ReasonBudgetTokens), nil, false, false, job.Failed, ReasonBudgetExhausted, true},
		{"refused until requests in flight settle: the agent's ending", refusedFor(gate.ReasonBudgetReserved), nil, false, false, job.Failed, "delegate.agent_exited", true},
		{"refused otherwise: the agent's ending", refusedFor(gate.ReasonModel), nil, false, false, job.Failed, "delegate.agent_exited", true},
		{"time limit wins over a refusal", refusedFor(gate.ReasonRequestSpend), nil, false, true, job.Failed, ReasonTimeLimit, true},
		{"agent exited non-zero", delegation.Result{Receipt: sandbox.Receipt{Exit: sandbox.Exit{Class: sandbox.ExitExited, Code: 1}}}, nil, false, false, job.Failed, "delegate.agent_exited", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state, reason, ended := ending(tt.res, tt.err, tt.cancelled, tt.timedOut)
			if state != tt.wantState || reason != tt.wantReason || ended != tt.wantEnded {
				t.Errorf("got (%v, %q, %v), want (%v, %q, %v)", state, reason, ended, tt.wantState, tt.wantReason, tt.wantEnded)
			}
		})
	}
}
