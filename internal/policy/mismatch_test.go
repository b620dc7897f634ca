package policy

import (
	"errors"
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
)

func TestCheckReported(t *testing.T) {
	tests := []struct {
		approved, reported string
		ok                 bool
	}{
		{"gpt-x", "gpt-x", true},
		{"claude-sonnet-4-5", "Claude-Sonnet-4-5", true},
		{"gpt-x", "gpt-y", false},
		{"gpt-x", "", false},
		{"", "", false},
		{"gpt-x", "gpt-x-high", false},
		{"gpt-x", "gpt-x\n; rm", false},
	}
	for _, tt := range tests {
		err := CheckReported(tt.approved, tt.reported)
		if tt.ok {
			if err != nil {
				t.Errorf("CheckReported(%q, %q) = %v, want nil", tt.approved, tt.reported, err)
			}
			continue
		}
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Code != fault.PolicyDenied || fe.Reason != ReasonModelMismatch {
			t.Errorf("CheckReported(%q, %q) = %v, want POLICY_DENIED consent.model_mismatch", tt.approved, tt.reported, err)
			continue
		}
		if r := fe.Details["reported"]; r != tt.reported && r != "(invalid id)" {
			t.Errorf("detail reported = %q", r)
		}
	}
}

func TestDecisionErr(t *testing.T) {
	tests := []struct {
		d      Decision
		code   fault.Code
		reason string
	}{
		{Decision{Effect: Deny, Reason: ReasonDenyRule, Rule: `governance.models.deny["m"]`, Model: "m"}, fault.PolicyDenied, ReasonDenyRule},
		{Decision{Effect: Deny, Reason: ReasonUnresolved}, fault.PolicyDenied, ReasonUnresolved},
		{Decision{Effect: Deny, Reason: ReasonInvalidModel, Model: "--yolo"}, fault.InvalidInput, ReasonInvalidModel},
	}
	for _, tt := range tests {
		var fe *fault.Error
		if !errors.As(tt.d.Err(), &fe) || fe.Code != tt.code || fe.Reason != tt.reason {
			t.Errorf("%+v.Err() = %v, want %s %s", tt.d, tt.d.Err(), tt.code, tt.reason)
		}
	}
	if fe := fault.From(tests[0].d.Err()); fe.Details["rule"] != `governance.models.deny["m"]` || fe.Details["model"] != "m" {
		t.Errorf("deny details = %v", fe.Details)
	}
	for _, e := range []Effect{Ask, Allow} {
		if err := (Decision{Effect: e}).Err(); err != nil {
			t.Errorf("%v Err() = %v, want nil", e, err)
		}
	}
}
