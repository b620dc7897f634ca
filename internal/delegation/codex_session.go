package delegation

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/adapter/codex/jsonrpc"
	"github.com/coagent8/coagent8/internal/adapter/jsonl"
	"github.com/coagent8/coagent8/internal/crash"
	"github.com/coagent8/coagent8/internal/fault"
)

// CodexReport is the part of Codex's app-server startup the candidate
// profile verifies: the version from initialize's userAgent, the
// thread/start result's sandbox, approval policy, model, provider and
// working directory, and every MCP server's status.
type CodexReport struct {
	Version        string            `json:"version"`
	Sandbox        string            `json:"sandbox"`
	ApprovalPolicy string            `json:"approval_policy"`
	Model          string            `json:"model"`
	ModelProvider  string            `json:"model_provider"`
	CWD            string            `json:"cwd"`
	MCPServers     map[string]string `json:"mcp_servers"`
}

// verify compares r with the Codex candidate profile: an exact match of
// every field, every MCP server disabled (a fresh CODEX_HOME configures
// none; one from a project layer must be off).
func (r CodexReport) verify(model string) error {
	switch {
	case r.Version != CodexVersion:
		return reportErr(fmt.Sprintf("version %q, want %q", clip(r.Version), CodexVersion))
	case r.Sandbox != CodexSandbox:
		return reportErr(fmt.Sprintf("sandbox %q, want %q", clip(r.Sandbox), CodexSandbox))
	case r.ApprovalPolicy != `"`+CodexApprovalPolicy+`"`:
		return reportErr(fmt.Sprintf("approval policy %s, want %q", clip(r.ApprovalPolicy), CodexApprovalPolicy))
	case r.Model != model:
		return reportErr(fmt.Sprintf("model %q, want the approved %q", clip(r.Model), model))
	case r.ModelProvider != CodexModelProvider:
		return reportErr(fmt.Sprintf("model provider %q, want %q", clip(r.ModelProvider), CodexModelProvider))
	case r.CWD != insideWorkspace:
		return reportErr(fmt.Sprintf("working directory %q, want %s", clip(r.CWD), insideWorkspace))
	}
	for name, st := range r.MCPServers {
		if st != "disabled" {
			return reportErr(fmt.Sprintf("MCP server %q is %q, want disabled", clip(name), clip(st)))
		}
	}
	return nil
}

const insideWorkspace = "/job/workspace"

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// codexRPCTimeout bounds each startup request (initialize, thread/start,
// mcpServerStatus/list, turn/start); the turn itself is bounded by the
// job's deadline.
const codexRPCTimeout = 60 * time.Second

// maxMCPPages bounds mcpServerStatus/list pagination.
const maxMCPPages = 100

// codexSession drives one Codex app-server inside the sandbox over its
// stdio: it verifies the startup report before any turn, runs the one
// turn, answers every server request (none should arrive under approval
// never) and keeps the final agent message. stop ends the job (it cancels
// the run: the sandbox kills the tree and the grant is revoked).
type codexSession struct {
	model, prompt string
	stop          func()
	inR           *io.PipeReader // the sandbox's stdin source
	inW           *io.PipeWriter
	outR          *io.PipeReader
	outW          *io.PipeWriter // the sandbox's stdout sink
	tee           io.Writer      // the job's Stdout: the raw JSON-RPC transcript
	done          chan struct{}  // closed when drive returns

	mu  sync.Mutex
	rep *CodexReport
	// thread is the verified thread's id (set with rep, before turn/start);
	// started holds the ids thread/started announced before it was known.
	// Only that thread's items and turn end count: any other thread runs
	// with a profile nobody verified.
	thread   string
	started  []string
	err      error
	final    string
	turnEnd  chan turnEnd
	turnOnce sync.Once
}

type turnEnd struct {
	status, message string
}

func newCodexSession(model, prompt string, tee io.Writer, stop func()) *codexSession {
	s := &codexSession{model: model, prompt: prompt, stop: stop, tee: tee, done: make(chan struct{}),
		turnEnd: make(chan turnEnd, 1)}
	s.inR, s.inW = io.Pipe()
	s.outR, s.outW = io.Pipe()
	return s
}

// stdout is the sandbox's Stdout: the transcript copy, then the client.
func (s *codexSession) stdout() io.Writer { return io.MultiWriter(s.tee, s.outW) }

// drive runs the session until the turn ends, a check fails, the
// process's output ends or ctx is done; then it closes the app-server's
// stdin, which ends it.
func (s *codexSession) drive(ctx context.Context) {
	defer close(s.done)
	defer s.inW.Close()
	// Whatever ends the client, the process's output keeps draining: a
	// blocked stdout would stall the process until the deadline.
	defer func() { go func() { _, _ = io.Copy(io.Discard, s.outR) }() }()
	// A panic in the client fails the session (the job fails with
	// PROCESS_ERROR internal.panic) and ends the app-server, not the
	// process that runs other jobs.
	defer crash.Stderr.Recover("codex session", s.fail)
	conn := jsonrpc.New(jsonl.NewReader(s.outR, adapter.RecordLimits()), s.inW, s, jsonrpc.Options{})
	if err := s.run(ctx, conn); err != nil {
		s.fail(err)
	}
}

func (s *codexSession) run(ctx context.Context, conn *jsonrpc.Conn) error {
	var rep CodexReport
	var init struct {
		UserAgent string `json:"userAgent"`
	}
	if err := s.call(ctx, conn, "initialize", map[string]any{"clientInfo": map[string]any{"name": "coagent8", "version": CodexVersion}}, &init); err != nil {
		return err
	}
	rep.Version = uaVersion(init.UserAgent)
	if err := conn.Notify("initialized", nil); err != nil {
		return startErr("initialized", err)
	}
	eph := true
	var th struct {
		ApprovalPolicy json.RawMessage `json:"approvalPolicy"`
		Sandbox        *struct {
			Type string `json:"type"`
		} `json:"sandbox"`
		Model         string `json:"model"`
		ModelProvider string `json:"modelProvider"`
		Cwd           string `json:"cwd"`
		Thread        struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	if err := s.call(ctx, conn, "thread/start", map[string]any{"cwd": insideWorkspace, "sandbox": "danger-full-access",
		"approvalPolicy": CodexApprovalPolicy, "ephemeral": eph, "model": s.model, "config": codexThreadConfig()}, &th); err != nil {
		return err
	}
	if th.Sandbox != nil {
		rep.Sandbox = th.Sandbox.Type
	}
	rep.ApprovalPolicy, rep.Model, rep.ModelProvider, rep.CWD = string(th.ApprovalPolicy), th.Model, th.ModelProvider, th.Cwd
	if th.Thread.ID == "" {
		return reportErr("thread/start reported no thread id")
	}
	var err error
	if rep.MCPServers, err = s.mcpStatus(ctx, conn, th.Thread.ID); err != nil {
		return err
	}
	if err := rep.verify(s.model); err != nil {
		return err
	}
	s.mu.Lock()
	s.rep, s.thread = &rep, th.Thread.ID
	other := slices.ContainsFunc(s.started, func(id string) bool { return id != th.Thread.ID })
	s.mu.Unlock()
	if other {
		return otherThread()
	}
	// The turn inherits the verified thread profile: no sandboxPolicy or
	// approvalPolicy here (notes/backends.md §1.1).
	turn := map[string]any{"threadId": th.Thread.ID, "input": []map[string]any{{"type": "text", "text": s.prompt}}}
	if err := s.call(ctx, conn, "turn/start", turn, nil); err != nil {
		return err
	}
	select {
	case end := <-s.turnEnd:
		if end.status != "completed" {
			return fault.New(fault.ProcessError, "delegation.codex_turn", "the Codex turn ended "+clip(end.status)+": "+clip(end.message)).
				With("status", clip(end.status))
		}
		return nil
	case <-conn.Done():
		return fault.Wrap(fault.ProcessError, "delegation.codex_exit", "Codex exited before its turn completed", conn.Err())
	case <-ctx.Done():
		return nil // cancelled or the deadline: the run says which
	}
}

// call is one startup request with its own timeout; a failure is the
// startup report's: the job is refused, never run unverified.
func (s *codexSession) call(ctx context.Context, conn *jsonrpc.Conn, method string, params, out any) error {
	ctx, cancel := context.WithTimeout(ctx, codexRPCTimeout)
	defer cancel()
	if err := conn.Call(ctx, method, params, out); err != nil {
		return startErr(method, err)
	}
	return nil
}

func startErr(method string, err error) error {
	return fault.Wrap(fault.SandboxUnavailable, "delegation.report",
		"the delegated CLI's startup report could not be read: "+method+" failed", err).With("detail", method)
}

// mcpStatus lists every MCP server's runtime status (all pages).
func (s *codexSession) mcpStatus(ctx context.Context, conn *jsonrpc.Conn, thread string) (map[string]string, error) {
	got := map[string]string{}
	var cursor *string
	for page := 0; page < maxMCPPages; page++ {
		var r struct {
			Data []struct {
				Name          string  `json:"name"`
				RuntimeStatus *string `json:"runtimeStatus"`
			} `json:"data"`
			NextCursor *string `json:"nextCursor"`
		}
		p := map[string]any{"threadId": thread}
		if cursor != nil {
			p["cursor"] = *cursor
		}
		if err := s.call(ctx, conn, "mcpServerStatus/list", p, &r); err != nil {
			return nil, err
		}
		for _, d := range r.Data {
			got[d.Name] = "unreported"
			if d.RuntimeStatus != nil {
				got[d.Name] = *d.RuntimeStatus
			}
		}
		if r.NextCursor == nil || *r.NextCursor == "" {
			return got, nil
		}
		cursor = r.NextCursor
	}
	return nil, reportErr(fmt.Sprintf("more than %d pages of MCP server status", maxMCPPages))
}

// uaVersion is the version in initialize's userAgent
// "<originator>/<X.Y.Z> (<os>; <arch>) …" (0.169.0).
func uaVersion(ua string) string {
	_, rest, _ := strings.Cut(ua, "/")
	v, _, _ := strings.Cut(rest, " ")
	return v
}

// Notification implements jsonrpc.Handler: the final agent message, the
// turn's end, and the events that break the profile (a hook ran; the
// model was swapped for one the grant does not name).
func (s *codexSession) Notification(method string, params json.RawMessage, _ jsonl.Cut) {
	var ids struct {
		ThreadID string `json:"threadId"`
		Thread   struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	_ = json.Unmarshal(params, &ids)
	s.mu.Lock()
	ours := s.thread != "" && ids.ThreadID == s.thread
	if method == "thread/started" && s.thread == "" {
		s.started = append(s.started, ids.Thread.ID)
	}
	foreign := method == "thread/started" && s.thread != "" && ids.Thread.ID != s.thread ||
		(method == "item/completed" || method == "turn/completed") && s.thread != "" && !ours
	s.mu.Unlock()
	if foreign {
		s.fail(otherThread())
		return
	}
	switch method {
	case "item/completed":
		if !ours {
			return // before the verified thread's turn: no item of it counts
		}
		var p struct {
			Item struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"item"`
		}
		if json.Unmarshal(params, &p) == nil && p.Item.Type == "agentMessage" {
			s.mu.Lock()
			s.final = p.Item.Text
			s.mu.Unlock()
		}
	case "turn/completed":
		if !ours {
			return
		}
		var p struct {
			Turn struct {
				Status string `json:"status"`
				Error  *struct {
					Message string `json:"message"`
				} `json:"error"`
			} `json:"turn"`
		}
		_ = json.Unmarshal(params, &p)
		end := turnEnd{status: p.Turn.Status}
		if p.Turn.Error != nil {
			end.message = p.Turn.Error.Message
		}
		s.turnOnce.Do(func() { s.turnEnd <- end })
	case "hook/started":
		s.fail(reportErr("a hook started: hooks must be off in the candidate profile"))
	case "model/rerouted":
		s.fail(reportErr("the model was rerouted away from the approved " + s.model))
	}
}

// Request implements jsonrpc.Handler. Under approval never no request
// should arrive; each one is refused (an unanswered one would hang the
// turn) and none widens the profile.
func (s *codexSession) Request(method string, _ json.RawMessage) (any, *jsonrpc.Error) {
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "not supported by coagent8's candidate profile"}
}

// otherThread refuses a thread other than the verified one: it was not
// started by this session, so its sandbox, approvals, model and MCP
// servers are unverified (a config layer written mid-job, a subagent).
func otherThread() error {
	return reportErr("a second Codex thread started: only the verified thread may run in the candidate profile")
}

// fail records the first error and ends the job.
func (s *codexSession) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
	s.stop()
}

// close is called once the sandbox run returned: the client sees the
// output's end, and a stdin read blocked in the sandbox's copier ends.
func (s *codexSession) close() {
	s.outW.Close()
	s.inR.Close()
	<-s.done
}

// result is the verified report and the final message, or why the job
// is refused.
func (s *codexSession) result() (CodexReport, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.err != nil:
		return CodexReport{}, s.final, s.err
	case s.rep == nil:
		return CodexReport{}, "", reportErr("no verified thread/start")
	}
	return *s.rep, s.final, nil
}
