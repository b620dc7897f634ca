package mcpserver

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/consent"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/governor"
	"github.com/coagent8/coagent8/internal/policy"
)

// TestJudgeAdmission: only accept with approve === true (a boolean)
// admits; every other answer is POLICY_DENIED with its consent reason.
func TestJudgeAdmission(t *testing.T) {
	tests := []struct {
		name   string
		res    mcp.ElicitResult
		reason string // "" = approved
	}{
		{"approve true", mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, ""},
		{"decline", mcp.ElicitResult{Action: "decline"}, consent.ReasonDeclined},
		{"cancel", mcp.ElicitResult{Action: "cancel"}, consent.ReasonCancelled},
		{"empty accept", mcp.ElicitResult{Action: "accept"}, consent.ReasonInvalidAnswer},
		{"string true", mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": "true"}}, consent.ReasonInvalidAnswer},
		{"number 1", mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": 1}}, consent.ReasonInvalidAnswer},
		{"approve false", mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}, consent.ReasonNotApproved},
		{"ack only", mcp.ElicitResult{Action: "accept", Content: map[string]any{"acknowledge_taint": true}}, consent.ReasonInvalidAnswer},
		{"unknown action", mcp.ElicitResult{Action: "approve", Content: map[string]any{"approve": true}}, consent.ReasonInvalidAnswer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := judgeAdmission(&tt.res)
			got := ""
			if err != nil {
				fe := fault.From(err)
				if fe.Code != fault.PolicyDenied {
					t.Errorf("code = %s, want POLICY_DENIED", fe.Code)
				}
				got = fe.Reason
			}
			if got != tt.reason {
				t.Errorf("reason = %q, want %q", got, tt.reason)
			}
		})
	}
}

// TestAdmissionParams: the form asks approve (boolean, required) and,
// for a tainted candidate only, acknowledge_taint; the message is the
// governor's question.
func TestAdmissionParams(t *testing.T) {
	q := governor.AdmissionQuestion{Job: "job_1", Workspace: "/w", Digest: "sha256:ab"}
	for _, taint := range []string{"", "gate.revoked"} {
		q.Taint = taint
		p := admissionParams(q)
		schema := p.RequestedSchema.(map[string]any)
		props := schema["properties"].(map[string]any)
		_, ack := props["acknowledge_taint"]
		if ack != (taint != "") || len(schema["required"].([]string)) != len(props) || p.Message != q.Message() || p.Mode != "form" {
			t.Errorf("taint %q: params = %+v", taint, p)
		}
		if props["approve"].(map[string]any)["type"] != "boolean" {
			t.Errorf("approve is not a boolean: %v", props["approve"])
		}
	}
}

func TestSafeName(t *testing.T) {
	for in, want := range map[string]string{"claude-code": "claude-code", "a b\u202e;=,": "ab", "": "unknown", strings.Repeat("x", 99): strings.Repeat("x", 64)} {
		if got := safeName(in); got != want {
			t.Errorf("safeName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestAskAdmissionWithoutSession: no session (or no elicitation
// capability) is consent.unsupported_client, never an approval.
func TestAskAdmissionWithoutSession(t *testing.T) {
	for _, req := range []*mcp.CallToolRequest{nil, {}} {
		ans, err := admissionElicitation{req: req}.AskAdmission(t.Context(), governor.AdmissionQuestion{Job: "job_1"})
		if fe := fault.From(err); err == nil || fe.Code != fault.PolicyDenied || fe.Reason != consent.ReasonUnsupportedClient || ans.Actor != "" {
			t.Errorf("req %v: answer %+v, err %v", req, ans, err)
		}
	}
}

// TestAdmissionParamsEscapeWorkspace: the approve field's description
// names the workspace escaped like the message (the agent's directory
// name must not add form lines or bidi overrides).
func TestAdmissionParamsEscapeWorkspace(t *testing.T) {
	q := governor.AdmissionQuestion{Job: "job_1", Workspace: "/w\nCheck: ok\u202e", Digest: "sha256:ab"}
	props := admissionParams(q).RequestedSchema.(map[string]any)["properties"].(map[string]any)
	desc := props["approve"].(map[string]any)["description"].(string)
	if strings.ContainsAny(desc, "\n\u202e") || !strings.Contains(desc, `/w\nCheck: ok\u202e`) {
		t.Errorf("description = %q", desc)
	}
}

// TestDeniedAfterTheUsersNo: the job and admission refusals reach the
// calling agent. After the user's own no, or a retry with no valid
// answer, they name no way around the user (delegate.allowWithoutAsking,
// `coagent8 admit` in a terminal); where nobody said no they still do.
func TestDeniedAfterTheUsersNo(t *testing.T) {
	q := governor.JobQuestion{Decision: policy.Decision{Model: "m"}}
	for _, tt := range []struct {
		reason string
		way    bool
	}{
		{consent.ReasonDeclined, false}, {consent.ReasonNotApproved, false}, {consent.ReasonInvalidState, false},
		{consent.ReasonInvalidAnswer, false}, {consent.ReasonUnsupportedClient, true}, {consent.ReasonTimeout, true},
	} {
		job, adm := fault.From(jobDenied(q, tt.reason, "what")).Message, fault.From(admissionDenied(tt.reason, "what")).Message
		if strings.Contains(job, "allowWithoutAsking") != tt.way || strings.Contains(adm, "coagent8 admit") != tt.way {
			t.Errorf("%s: job %q, admission %q (want a way around: %v)", tt.reason, job, adm, tt.way)
		}
	}
}
