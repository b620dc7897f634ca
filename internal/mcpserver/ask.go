package mcpserver

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/consent"
	"github.com/coagent8/coagent8/internal/governor"
)

// Input-request keys of the job question and the admission form; each is
// also bound into its request state, so an answer to one never answers
// the other (or consult's).
const (
	jobInputKey       = "coagent8.delegate_job"
	admissionInputKey = "coagent8.admission"
)

// inputAsk asks delegate's job question or request_admission's form by
// the MCP ≥ 2026-07-28 multi-round-trip flow of package consent (the one
// consult uses): the first pass returns the form as an input request
// with a signed, bound, single-use request state and starts nothing; the
// retried call is judged from its inputResponses. res is the first
// pass's result, which the tool handler returns unchanged.
type inputAsk struct {
	gate *consent.Gate
	res  *mcp.CallToolResult
}

// ask returns [governor.ErrPending] after setting p.res on the first
// pass; on the retried call it returns the answer to judge, or the
// consent.* reason it is refused with (invalid_state: forged, replayed,
// another question's, or other arguments; timeout; invalid_answer: no
// answer under key).
func (p *inputAsk) ask(req *mcp.CallToolRequest, key, binding string, params *mcp.ElicitParams) (*mcp.ElicitResult, string, error) {
	if p == nil || p.gate == nil {
		return nil, consent.ReasonUnsupportedClient, nil
	}
	if !consent.Answered(req) {
		p.res = p.gate.AskBound(key, binding, params)
		return nil, "", governor.ErrPending
	}
	res, reason := p.gate.AnswerBound(req, key, binding)
	return res, reason, nil
}

// multiRoundTrip reports whether req's protocol asks by input request.
func multiRoundTrip(req *mcp.CallToolRequest) bool {
	return req != nil && consent.MultiRoundTrip(req.ProtocolVersion())
}

// canAskForm reports whether the client of req declared form elicitation
// (in the request's _meta on 2026-07-28, else at initialize).
func canAskForm(req *mcp.CallToolRequest) bool {
	if req == nil {
		return false
	}
	return formElicitation(&mcp.InitializeParams{Capabilities: req.ClientCapabilities()})
}

// boundWhat is the refusal text of a retried call consent refused.
func boundWhat(reason string) string {
	switch reason {
	case consent.ReasonTimeout:
		return "the approval request was not answered in time"
	case consent.ReasonInvalidAnswer:
		return "the retried call carried no answer to this question (approve: true)"
	case consent.ReasonUnsupportedClient:
		return "this MCP client cannot show an approval form (no elicitation support)"
	}
	return "the retried call's request state is missing, forged, already used, or belongs to another question or to other arguments"
}

// jobBinding is everything the job answer approves: the call's arguments
// and the question the server resolved from them (backend, concrete
// model, price, budget, workspace).
func jobBinding(a DelegateArgs, q governor.JobQuestion) string {
	args, _ := json.Marshal(a) // a struct of strings, numbers and pointers to them
	return "delegate.job\x00" + string(args) + "\x00" + q.Message()
}

// admissionBinding is everything the admission answer approves: the job,
// its workspace, the candidate's digest, its taint and the whole question.
func admissionBinding(q governor.AdmissionQuestion) string {
	return "admission\x00" + q.Job + "\x00" + q.Workspace + "\x00" + q.Digest + "\x00" + q.Taint + "\x00" + q.Message()
}
