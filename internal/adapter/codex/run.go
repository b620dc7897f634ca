package codex

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/fault"
)

// interruptWait is how long a cancelled turn may take to report
// "interrupted" before the tree is killed.
const interruptWait = 2 * time.Second

// Run executes one verified read-only turn: start the app-server, verify
// the thread and MCP status, then send the prompt. Errors are *fault.Error;
// no Result is returned unless the profile was verified and the turn
// completed.
func (b *Backend) Run(ctx context.Context, t adapter.Turn) (adapter.Result, error) {
	if err := checkTurn(t); err != nil {
		return adapter.Result{}, err
	}
	pr, err := b.prepare()
	if err != nil {
		return adapter.Result{}, err
	}
	procCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	ev := newEvents(t.Observer, b.env.Home(), t.CheckModel)
	s, err := b.startSession(procCtx, pr, t.Workspace, orDefault(t.Deadline, adapter.DefaultDeadline),
		orDefault(t.IdleTimeout, adapter.DefaultIdleTimeout), ev)
	if err != nil {
		return adapter.Result{}, err
	}
	res, err := s.run(ctx, stop, t, pr)
	if err != nil {
		s.p.Kill()
		return adapter.Result{}, s.p.Classify(err)
	}
	s.close()
	return res, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// checkTurn refuses malformed input before anything starts (R-017: no
// field of a turn can add arguments).
func checkTurn(t adapter.Turn) error {
	if t.Model != "" {
		if err := adapter.ValidModel(t.Model); err != nil {
			return err
		}
	}
	if t.Effort != "" {
		if err := adapter.ValidEffort(t.Effort); err != nil {
			return err
		}
	}
	if t.SessionID != "" && !adapter.IsUUID(t.SessionID) {
		return fault.New(fault.SessionInvalid, "codex.session_id", "The Codex session id is not a thread id.")
	}
	if len(t.Prompt) > adapter.MaxPromptBytes {
		return fault.New(fault.InputLimit, "prompt.limit", fmt.Sprintf("The prompt is %d bytes of UTF-8, above the limit of %d bytes (%d MiB).", len(t.Prompt), adapter.MaxPromptBytes, adapter.MaxPromptBytes>>20)).With("limitBytes", fmt.Sprint(adapter.MaxPromptBytes))
	}
	return nil
}

// run is the protocol sequence of one turn (notes/backends.md §1.1).
func (s *session) run(ctx context.Context, stop context.CancelFunc, t adapter.Turn, pr prepared) (adapter.Result, error) {
	thread, err := s.verified(ctx, t, pr)
	if err != nil {
		return adapter.Result{}, err
	}
	var ts turnStartResult
	params := turnStartParams{ThreadID: thread.Thread.ID, Input: []userInput{{Type: "text", Text: t.Prompt}},
		Model: t.Model, Effort: t.Effort, OutputSchema: t.OutputSchema}
	if err := s.call(ctx, "turn/start", params, &ts); err != nil {
		return adapter.Result{}, err
	}
	s.ev.mu.Lock()
	s.ev.turnID = ts.Turn.ID
	s.ev.mu.Unlock()
	if err := s.wait(ctx, stop, thread.Thread.ID, ts.Turn.ID); err != nil {
		return adapter.Result{}, err
	}
	return s.result(thread)
}

// verified opens the thread and proves the profile: thread policy, the
// reported model and MCP status. Nothing is sent to the model
// before it returns nil.
func (s *session) verified(ctx context.Context, t adapter.Turn, pr prepared) (threadResult, error) {
	if err := s.handshake(ctx); err != nil {
		return threadResult{}, err
	}
	if err := s.signedIn(ctx); err != nil {
		return threadResult{}, err
	}
	servers, _, err := s.effectiveServers(ctx, t.Workspace, pr.uc.Servers)
	if err != nil {
		return threadResult{}, err
	}
	thread, err := s.openThread(ctx, t.Workspace, t.Model, t.SessionID, servers, s.b.opts.Ephemeral)
	if err != nil {
		return thread, err
	}
	if err := checkModel(t, thread.Model); err != nil {
		return thread, err
	}
	if _, err := s.checkMCP(ctx, thread.Thread.ID, servers); err != nil {
		return thread, err
	}
	s.servers = len(servers)
	s.ev.mu.Lock()
	s.ev.model = thread.Model
	s.ev.mu.Unlock()
	return thread, nil
}

// checkModel binds the turn to the model Codex reports for the thread: the
// consent hook decides, and a named model that differs is refused even
// without a hook.
func checkModel(t adapter.Turn, reported string) error {
	if t.CheckModel != nil {
		if err := t.CheckModel(reported); err != nil {
			return err
		}
	}
	if t.Model != "" && reported != t.Model {
		return fault.New(fault.PolicyDenied, "consent.model_mismatch",
			fmt.Sprintf("Codex reported model %q, not the requested %q; the turn was not started.", clip(reported, 64), t.Model))
	}
	return nil
}

// wait blocks until the turn completes, the app-server exits, a profile
// breach is seen, or ctx ends (then the turn is interrupted first).
func (s *session) wait(ctx context.Context, stop context.CancelFunc, threadID, turnID string) error {
	select {
	case <-s.ev.done:
		return nil
	case <-s.conn.Done():
		// The reader handles every record before Done closes, so a
		// terminal report that preceded the exit has been seen.
		select {
		case <-s.ev.done:
			return nil
		default:
			return s.midTurnExit()
		}
	case <-ctx.Done():
		s.interrupt(threadID, turnID)
		stop()
		return fault.New(fault.Aborted, "turn.cancelled", "The turn was cancelled.")
	}
}

// interrupt asks Codex to stop the turn and waits briefly for it.
func (s *session) interrupt(threadID, turnID string) {
	ctx, cancel := context.WithTimeout(context.Background(), interruptWait)
	defer cancel()
	_ = s.conn.Call(ctx, "turn/interrupt", turnInterruptParams{ThreadID: threadID, TurnID: turnID}, nil)
	select {
	case <-s.ev.done:
	case <-ctx.Done():
	}
}

// midTurnExit: the app-server went away before turn/completed. Streamed
// text is discarded: a partial answer is never returned as complete.
func (s *session) midTurnExit() error {
	s.ev.mu.Lock()
	partial := s.ev.partial
	s.ev.mu.Unlock()
	err := s.exited(s.conn.Err()).(*fault.Error)
	if partial > 0 {
		err = err.With("partialAnswer", fmt.Sprintf("discarded (%d bytes, incomplete)", partial))
	}
	return err
}

// result turns the finished turn into a Result or a typed failure.
func (s *session) result(thread threadResult) (adapter.Result, error) {
	e := s.ev
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.fatal != nil {
		return adapter.Result{}, e.fatal
	}
	switch st := e.completed.Turn.Status; st {
	case "completed":
	case "failed":
		te := e.completed.Turn.Error
		if te == nil {
			te = e.lastErr
		}
		return adapter.Result{}, turnFailure(te, e.resetsAt, s.home)
	case "interrupted":
		return adapter.Result{}, fault.New(fault.Aborted, "codex.interrupted", "The Codex turn was interrupted.")
	default:
		return adapter.Result{}, fault.New(fault.ProtocolError, "codex.turn_status", "Codex ended the turn with status "+clip(st, 32)+".")
	}
	sessionID := thread.Thread.ID
	if thread.Thread.Ephemeral {
		sessionID = "" // not on disk: a later call could not resume it
	}
	final := answer(e.messages)
	return adapter.Result{Text: final.text, Truncated: final.clipped, SessionID: sessionID, Model: e.model, ToolCount: e.tools,
		Usage: e.usage, Warnings: append([]string(nil), e.warnings...), Verified: verifiedLine(s.servers, s.version)}, nil
}

// answer picks the final answer: the last final_answer message, else the
// last message that is not commentary, else none.
func answer(msgs []agentMessage) agentMessage {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].phase == "final_answer" {
			return msgs[i]
		}
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].phase != "commentary" {
			return msgs[i]
		}
	}
	return agentMessage{}
}

func verifiedLine(servers int, version string) string {
	return fmt.Sprintf("codex.thread: sandbox=readOnly networkAccess=false approvalPolicy=never mcp_servers_disabled=%d features_off=[%s] version=%s",
		servers, strings.Join(DisabledFeatures, ","), clip(version, 32))
}

// signedIn refuses a turn at once when Codex itself reports that its
// provider needs OpenAI sign-in and no account is signed in: otherwise the
// CLI retries the provider until the turn's deadline (newcomer report). A
// failed account/read is not a refusal: the turn's own errors tell.
func (s *session) signedIn(ctx context.Context) error {
	var r accountResult
	if err := s.call(ctx, "account/read", map[string]any{}, &r); err != nil {
		return nil
	}
	if r.Account == nil && r.RequiresOpenaiAuth {
		return fault.New(fault.AuthRequired, "codex.not_signed_in",
			"Codex is not signed in. Run `codex login` (or configure an API-key provider), then retry.")
	}
	return nil
}
