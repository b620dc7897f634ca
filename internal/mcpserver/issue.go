package mcpserver

import (
	"context"
	"encoding/json"
	"runtime"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/doctor"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/issuereport"
	"github.com/coagent8/coagent8/internal/version"
)

// IssueArgs are the issue tool's arguments (contract.md §1).
type IssueArgs struct {
	ErrorMessage  string `json:"error_message,omitempty" jsonschema:"what went wrong (first line becomes the title)"`
	Context       string `json:"context,omitempty" jsonschema:"what you were doing; logs (credentials, home paths, code and diffs are removed)"`
	IncludeDoctor *bool  `json:"include_doctor,omitempty" jsonschema:"include the doctor summary (default true)"`
}

const issueDescription = `Prepare a sanitized bug report for coagent8: title, body (versions, doctor summary, the last error, ` +
	`with credentials, home paths, code and diffs removed) and a prefilled new-issue link. Nothing is sent anywhere: ` +
	`show the report to the user, who may open the link.`

// IssueRecorder keeps a report's exact bytes locally under the
// closed-diagnostic-recording purpose (issue 10 §5): the bytes are admitted
// against that purpose's own disclosure capacity, then written to a
// fixed local directory. It never sends anything. path is where the
// record was written.
type IssueRecorder interface {
	Record(ctx context.Context, report []byte) (path string, err error)
}

// IssueResult is the issue tool's structured result: the report and where
// its exact bytes were recorded locally (or why they were not).
type IssueResult struct {
	issuereport.Report
	// RecordedAt is the local record of the report's canonical JSON ("~"
	// for the home directory); empty when it was not recorded.
	RecordedAt string   `json:"recordedAt,omitempty"`
	Warnings   []string `json:"warnings,omitempty"`
}

func (s *Server) issueTool() (*mcp.Tool, mcp.ToolHandler) {
	in, resolved := schemaFor[IssueArgs](nil)
	out := outputSchemaFor[IssueResult]()
	tool := &mcp.Tool{Name: "issue", Title: "Prepare a bug report", Description: issueDescription,
		InputSchema: in, OutputSchema: out, Icons: []mcp.Icon{icon()},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}}
	return tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a, err := decode[IssueArgs](req.Params.Arguments, resolved)
		if err != nil {
			return s.inputError(req, err)
		}
		r := s.record(ctx, s.Issue(ctx, a))
		text := r.Title + "\n\n" + r.Body + "\nOpen to file it (nothing was sent): " + r.IssueURL
		if r.RecordedAt != "" {
			text += "\nA local copy was recorded at " + r.RecordedAt
		}
		for _, w := range r.Warnings {
			text += "\n> Warning: " + w
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: r}, nil
	}
}

// record admits and records the report's canonical JSON bytes. A refusal
// (capacity spent, no recorder) is a warning: the report is still shown.
func (s *Server) record(ctx context.Context, r issuereport.Report) IssueResult {
	out := IssueResult{Report: r}
	if s.issueRecorder == nil {
		return out
	}
	b, err := canonicalJSON(r)
	if err == nil {
		var path string
		if path, err = s.issueRecorder.Record(ctx, b); err == nil {
			out.RecordedAt = s.diag.String(path)
			return out
		}
	}
	fe := fault.From(err)
	out.Warnings = append(out.Warnings, s.diag.String("the report was not recorded locally: "+fe.Message+" ("+fe.Reason+")"))
	return out
}

// canonicalJSON is encoding/json's compact encoding with object keys
// sorted (what closed-diagnostic-recording@1 admits).
func canonicalJSON(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		return nil, err
	}
	return json.Marshal(generic)
}

// Issue builds the sanitized report: the doctor summary (metadata probes
// only, unless include_doctor is false) and the last failure this process
// returned. It performs no network I/O.
func (s *Server) Issue(ctx context.Context, a IssueArgs) issuereport.Report {
	in := issuereport.Input{ErrorMessage: a.ErrorMessage, Context: a.Context, LastError: s.state.lastError(),
		Home: s.env.Home(), Versions: issuereport.Versions{Coagent8: version.String(), Go: runtime.Version(),
			OS: runtime.GOOS + "/" + runtime.GOARCH}}
	if a.IncludeDoctor == nil || *a.IncludeDoctor {
		rep := s.Doctor(ctx)
		in.Doctor = summarize(rep)
		in.Versions.Backends = map[string]string{}
		for _, b := range rep.Backends {
			in.Versions.Backends[b.Backend] = b.Version
		}
	}
	return issuereport.Build(in)
}

// doctorSummary is the part of the doctor report a bug report needs
// (the full report does not fit the body's 4 KiB).
type doctorSummary struct {
	Status   string           `json:"status"`
	Ready    []string         `json:"ready"`
	Backends []backendSummary `json:"backends"`
}

type backendSummary struct {
	Backend          string `json:"backend"`
	Installed        bool   `json:"installed"`
	Version          string `json:"version,omitempty"`
	Supported        bool   `json:"supported"`
	AuthStatus       string `json:"authStatus"`
	ReadOnlyVerified bool   `json:"readOnlyVerified"`
	Error            string `json:"error,omitempty"`
}

func summarize(r doctor.Report) doctorSummary {
	out := doctorSummary{Status: r.Status, Ready: r.ReadyBackends}
	for _, b := range r.Backends {
		bs := backendSummary{Backend: b.Backend, Installed: b.Installed, Version: b.Version, Supported: b.Supported,
			AuthStatus: b.AuthStatus, ReadOnlyVerified: b.ReadOnlyVerified}
		if b.Error != nil {
			bs.Error = b.Error.Code
		} else if b.VerifyError != nil {
			bs.Error = b.VerifyError.Code
		}
		out.Backends = append(out.Backends, bs)
	}
	return out
}
