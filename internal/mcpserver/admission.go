package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/admission"
	"github.com/coagent8/coagent8/internal/consent"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/governor"
	"github.com/coagent8/coagent8/internal/turn"
)

// AdmissionArgs are the request_admission tool's arguments (issue 16
// scope 5). There is no field that approves or acknowledges: only the
// user's answer to the elicitation does.
type AdmissionArgs struct {
	Job           string `json:"job" jsonschema:"the delegate job handle (job_…) whose candidate the user should be shown"`
	WorkspacePath string `json:"workspace_path" jsonschema:"absolute path of the job's workspace"`
}

// AdmissionView is request_admission's structuredContent after the user
// approved: what was written to the checkout, and who admitted it.
type AdmissionView struct {
	SchemaVersion int    `json:"schemaVersion"`
	Job           string `json:"job"`
	Admitted      bool   `json:"admitted"`
	// Digest is the "sha256:" digest of the admitted patch bytes.
	Digest string `json:"digest"`
	// Paths are the workspace-relative paths written or removed.
	Paths    []string `json:"paths"`
	ThreeWay bool     `json:"three_way" jsonschema:"true when the checkout had moved since the job's base and a three-way apply was needed"`
	// AdmittedBy is the recorded actor: the user's elicitation answer.
	AdmittedBy string `json:"admitted_by"`
	Message    string `json:"message"`
}

func admissionSchema(s *jsonschema.Schema) {
	s.Required = []string{"job", "workspace_path"}
	nonEmpty(s, "job", "workspace_path")
}

const admissionDescription = `Ask the user to review a finished delegate job's candidate patch for admission. ` +
	`This tool does not admit anything by itself: it only shows the user an approval form (elicitation) with the diff summary ` +
	`(files, added/removed lines, digest), every scan finding, the taint reason and the checks; only the user's approve:true ` +
	`applies the patch to the checkout (all or nothing). Any other answer, or a host without elicitation, is POLICY_DENIED ` +
	`and nothing is written. The user can also admit with coagent8 admit JOB in a terminal.`

func (s *Server) admissionTool() (*mcp.Tool, mcp.ToolHandler) {
	in, resolved := schemaFor[AdmissionArgs](admissionSchema)
	out := outputSchemaFor[AdmissionView]()
	out.Required = nil
	tool := &mcp.Tool{Name: "request_admission", Title: "Ask the user to admit a delegate job's candidate", Description: admissionDescription,
		InputSchema: in, OutputSchema: out, Icons: []mcp.Icon{icon()},
		// Destructive: when the user approves, the checkout's files are
		// overwritten with the candidate (hosts that confirm destructive
		// tools ask a second time); never idempotent (a second admission
		// is refused); closed world: no network.
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(false)}}
	return tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a, err := decode[AdmissionArgs](req.Params.Arguments, resolved)
		if err != nil {
			return s.inputError(req, err)
		}
		v, pending, err := s.requestAdmission(ctx, req, a)
		if pending != nil {
			return pending, nil // the form as an input request (MCP ≥ 2026-07-28)
		}
		if err != nil {
			return s.toolError(err), nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: v.Message}}, StructuredContent: v}, nil
	}
}

// requestAdmission serves one request_admission call. A non-nil result
// is the form as an input request (MCP ≥ 2026-07-28), to return unchanged.
func (s *Server) requestAdmission(ctx context.Context, req *mcp.CallToolRequest, a AdmissionArgs) (AdmissionView, *mcp.CallToolResult, error) {
	ws, err := turn.Workspace(a.WorkspacePath)
	if err != nil {
		return AdmissionView{}, nil, err
	}
	e := admissionElicitation{req: req, in: &inputAsk{gate: s.consent}}
	res, err := s.gov.RequestAdmission(ctx, ws, a.Job, e)
	if errors.Is(err, governor.ErrPending) && e.in.res != nil {
		return AdmissionView{}, e.in.res, nil
	}
	if err != nil {
		return AdmissionView{}, nil, err
	}
	msg := fmt.Sprintf("The user admitted job %s through the approval form: %d paths written to the checkout (digest %s).",
		res.Job, len(res.Paths), res.Digest)
	return AdmissionView{SchemaVersion: 1, Job: res.Job, Admitted: true, Digest: res.Digest, Paths: res.Paths,
		ThreeWay: res.ThreeWay, AdmittedBy: e.actor(), Message: msg}, nil, nil
}

// admissionElicitation asks the admission question through the tool
// call's form elicitation. Only accept with approve === true admits
// a tainted candidate also needs acknowledge_taint === true.
// It asks by elicitation/create before MCP 2026-07-28 and by an input
// request in the tool result from that revision on ([inputAsk]: the
// retried call must name the same job, whose candidate digest and
// question are unchanged, with its single-use state, or it is refused
// consent.invalid_state). Hosts without form elicitation are refused
// consent.unsupported_client.
type admissionElicitation struct {
	req *mcp.CallToolRequest
	in  *inputAsk
}

func (e admissionElicitation) AskAdmission(ctx context.Context, q governor.AdmissionQuestion) (governor.AdmissionAnswer, error) {
	req := e.req
	if multiRoundTrip(req) && canAskForm(req) {
		res, reason, err := e.in.ask(req, admissionInputKey, admissionBinding(q), admissionParams(q))
		switch {
		case err != nil:
			return governor.AdmissionAnswer{}, err // governor.ErrPending: nothing is admitted on this pass
		case reason != "":
			return governor.AdmissionAnswer{}, admissionDenied(reason, boundWhat(reason))
		}
		return e.judged(q, res)
	}
	if req == nil || req.Session == nil || !formElicitation(req.Session.InitializeParams()) {
		return governor.AdmissionAnswer{}, admissionDenied(consent.ReasonUnsupportedClient, "this MCP client cannot show an approval form (no elicitation support)")
	}
	ectx, cancel := context.WithTimeout(ctx, consent.DefaultTimeout)
	defer cancel()
	res, err := req.Session.Elicit(ectx, admissionParams(q))
	switch {
	case err != nil && ctx.Err() != nil:
		return governor.AdmissionAnswer{}, admissionDenied(consent.ReasonAborted, "the call was cancelled while waiting for the user")
	case err != nil && ectx.Err() != nil:
		return governor.AdmissionAnswer{}, admissionDenied(consent.ReasonTimeout, "the approval request was not answered in time")
	case err != nil:
		return governor.AdmissionAnswer{}, fault.Wrap(fault.PolicyDenied, consent.ReasonFailed, "the candidate was not admitted: the approval request failed", err)
	}
	return e.judged(q, res)
}

// judged is the answer res to q: approving only for accept with
// approve === true, acknowledging the taint only with
// acknowledge_taint === true.
func (e admissionElicitation) judged(q governor.AdmissionQuestion, res *mcp.ElicitResult) (governor.AdmissionAnswer, error) {
	if err := judgeAdmission(res); err != nil {
		return governor.AdmissionAnswer{}, err
	}
	ans := governor.AdmissionAnswer{Actor: e.actor()}
	if ack, _ := res.Content["acknowledge_taint"].(bool); ack && q.Taint != "" {
		ans.Ack = []string{admission.AckTainted}
	}
	return ans, nil
}

// judgeAdmission returns nil only for accept with approve === true.
func judgeAdmission(res *mcp.ElicitResult) error {
	switch res.Action {
	case "decline":
		return admissionDenied(consent.ReasonDeclined, "the user declined")
	case "cancel":
		return admissionDenied(consent.ReasonCancelled, "the approval request was cancelled or dismissed in the host")
	case "accept":
	default:
		return admissionDenied(consent.ReasonInvalidAnswer, "the answer did not contain approve: true")
	}
	switch approve, ok := res.Content["approve"].(bool); {
	case !ok:
		return admissionDenied(consent.ReasonInvalidAnswer, "the answer did not contain approve: true")
	case !approve:
		return admissionDenied(consent.ReasonNotApproved, "the user did not approve")
	}
	return nil
}

// actor names the admitting answer for the admission record: the host's
// self-reported name (reduced to a safe alphabet) and this user's uid.
func (e admissionElicitation) actor() string {
	name := "unknown"
	if e.req != nil && e.req.Session != nil {
		if p := e.req.Session.InitializeParams(); p != nil && p.ClientInfo != nil {
			name = safeName(p.ClientInfo.Name)
		}
	}
	return fmt.Sprintf("mcp-elicitation:client=%s,uid=%d", name, os.Getuid())
}

func safeName(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return -1
	}, s)
	if len(s) > 64 {
		s = s[:64]
	}
	if s == "" {
		return "unknown"
	}
	return s
}

func admissionParams(q governor.AdmissionQuestion) *mcp.ElicitParams {
	props := map[string]any{"approve": map[string]any{"type": "boolean", "title": "Admit this candidate into the checkout",
		"description": "Choose true to write exactly this patch (" + q.Digest + ") to " + q.WorkspaceText() + "."}}
	required := []string{"approve"}
	if q.Taint != "" {
		props["acknowledge_taint"] = map[string]any{"type": "boolean", "title": "I have read the taint reason",
			"description": "The candidate is tainted (" + q.Taint + "); choose true to admit it anyway."}
		required = append(required, "acknowledge_taint")
	}
	schema := map[string]any{"type": "object", "required": required, "properties": props}
	return &mcp.ElicitParams{Mode: "form", Message: q.Message(), RequestedSchema: schema}
}

func admissionDenied(reason, what string) error {
	way := " (the user can admit it with coagent8 admit JOB in a terminal)"
	if governor.NoWayAround(reason) {
		way = "" // the user's no, or no valid answer: no way around it for the agent
	}
	return fault.New(fault.PolicyDenied, reason, "the candidate was not admitted: "+what+
		"; nothing was written to the checkout"+way)
}
