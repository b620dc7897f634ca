package cli

import (
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/governor"
	"github.com/coagent8/coagent8/internal/job"
)

// TestDelegateFailed: a failed job reaches the terminal as a typed error
// with its reason, its cause in words and where to look, not as
// "internal error" (newcomer report: a plain error lost all of it).
func TestDelegateFailed(t *testing.T) {
	tests := []struct {
		reason      string
		wantCode    fault.Code
		wantReason  string
		wantMessage string
	}{
		{governor.ReasonTimeLimit, fault.Timeout, governor.ReasonTimeLimit, "delegate job j1 failed: its agent was still working when its 3 minutes ran out; `coagent8 jobs j1` shows the job and `coagent8 audit` the gate's decisions on its requests"},
		{governor.ReasonBudgetExhausted, fault.ProcessError, governor.ReasonBudgetExhausted, "failed: its agent stopped once the gate refused a request for the job's budget;"},
		{governor.ReasonBudgetBelowRequest, fault.ProcessError, governor.ReasonBudgetBelowRequest, "failed: the gate refused its agent's request because that one request reserves more than the job's whole budget of $1; give a larger --max-usd;"},
		{"delegate.agent_exited", fault.ProcessError, "delegate.agent_exited", "failed: its agent exited with an error;"},
		{"sandbox.pin_changed", fault.ProcessError, "sandbox.pin_changed", "delegate job j1 failed; `coagent8 jobs j1`"},
		{"", fault.ProcessError, "delegate.failed", "delegate job j1 failed;"},
	}
	for _, tt := range tests {
		t.Run(tt.wantReason, func(t *testing.T) {
			v := governor.JobView{Job: "j1", State: job.Failed.String(), Reason: tt.reason, Budget: job.Budget{MaxMinutes: 3, MaxUSD: 1}}
			fe := fault.From(delegateFailed(v))
			if fe.Code != tt.wantCode || fe.Reason != tt.wantReason || !strings.Contains(fe.Message, tt.wantMessage) {
				t.Errorf("got %s %s %q, want %s %s containing %q", fe.Code, fe.Reason, fe.Message, tt.wantCode, tt.wantReason, tt.wantMessage)
			}
		})
	}
}
