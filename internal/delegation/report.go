package delegation

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/coagent8/coagent8/internal/fault"
)

// Report is the part of Claude Code's system/init event the candidate
// profile verifies.
type Report struct {
	Tools          []string `json:"tools"`
	PermissionMode string   `json:"permissionMode"`
	MCPServers     []any    `json:"mcp_servers"`
	Model          string   `json:"model"`
	Version        string   `json:"claude_code_version"`
	CWD            string   `json:"cwd"`
}

// verify compares r with the candidate profile.
func (r Report) verify(model string) error {
	tools := slices.Sorted(slices.Values(r.Tools))
	switch {
	case !slices.Equal(tools, ClaudeTools):
		return reportErr(fmt.Sprintf("tools %v, want %v", tools, ClaudeTools))
	case r.PermissionMode != ClaudePermissionMode:
		return reportErr(fmt.Sprintf("permission mode %q, want %q", r.PermissionMode, ClaudePermissionMode))
	case len(r.MCPServers) != 0:
		return reportErr(fmt.Sprintf("%d MCP servers, want none", len(r.MCPServers)))
	case r.Version != ClaudeVersion:
		return reportErr(fmt.Sprintf("version %q, want %q", r.Version, ClaudeVersion))
	case r.Model != model:
		return reportErr(fmt.Sprintf("model %q, want the approved %q", r.Model, model))
	case r.CWD != "/job/workspace":
		return reportErr(fmt.Sprintf("working directory %q, want /job/workspace", r.CWD))
	}
	return nil
}

func reportErr(detail string) error {
	return fault.New(fault.SandboxUnavailable, "delegation.report",
		"the delegated CLI's startup report differs from the candidate profile: "+detail).With("detail", detail)
}

// reportWatch forwards the CLI's stdout and checks the first system/init
// line; a mismatch or a model request before it ends the run (stop).
// Lines before init that are not init (Claude Code 2.1.328 first prints
// system/ui_invalidate) are passed through.
type reportWatch struct {
	w     io.Writer
	model string
	stop  func()

	mu   sync.Mutex
	line []byte
	rep  *Report
	err  error
}

// maxLine bounds the buffered partial line before init.
const maxLine = 1 << 20

func newReportWatch(w io.Writer, model string, stop func()) *reportWatch {
	return &reportWatch{w: w, model: model, stop: stop}
}

func (r *reportWatch) Write(p []byte) (int, error) {
	r.mu.Lock()
	if r.rep == nil && r.err == nil {
		r.scan(p)
	}
	r.mu.Unlock()
	return r.w.Write(p)
}

// scan looks for the init event in complete lines (called under mu).
func (r *reportWatch) scan(p []byte) {
	r.line = append(r.line, p...)
	for {
		i := bytes.IndexByte(r.line, '\n')
		if i < 0 {
			if len(r.line) > maxLine {
				r.fail(reportErr("no system/init within the first MiB"))
			}
			return
		}
		ln := r.line[:i]
		r.line = r.line[i+1:]
		var ev struct {
			Type    string `json:"type"`
			Subtype string `json:"subtype"`
			Report
		}
		if json.Unmarshal(ln, &ev) != nil || ev.Type != "system" {
			r.fail(reportErr("output before system/init"))
			return
		}
		if ev.Subtype != "init" {
			continue
		}
		if err := ev.Report.verify(r.model); err != nil {
			r.fail(err)
			return
		}
		rep := ev.Report
		r.rep, r.line = &rep, nil
		return
	}
}

func (r *reportWatch) fail(err error) {
	r.err, r.line = err, nil
	r.stop()
}

// result is the verified report, or why there is none.
func (r *reportWatch) result() (Report, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.err != nil:
		return Report{}, r.err
	case r.rep == nil:
		return Report{}, reportErr("no system/init")
	}
	return *r.rep, nil
}
