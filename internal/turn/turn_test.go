package turn

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
)

// countingBackend counts Run calls; validation tests assert it stays 0.
type countingBackend struct {
	runs atomic.Int32
	res  adapter.Result
	err  error
}

func (c *countingBackend) Name() string                        { return "claude" }
func (c *countingBackend) Probe(context.Context) adapter.Probe { return adapter.Probe{} }
func (c *countingBackend) Run(_ context.Context, t adapter.Turn) (adapter.Result, error) {
	c.runs.Add(1)
	return c.res, c.err
}

func newRunner(t *testing.T, b adapter.Backend, env ...string) (*Runner, *event.Memory) {
	ev := &event.Memory{}
	r, err := New(Options{Env: config.FromList(append([]string{"HOME=/home/u"}, env...)), Backends: []adapter.Backend{b}, Events: ev})
	if err != nil {
		t.Fatal(err)
	}
	return r, ev
}

func TestBadInputIsRefusedBeforeTheBackend(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, []byte("x"), 0o600)
	tests := []struct {
		name   string
		req    Request
		code   fault.Code
		reason string
	}{
		{"missing workspace", Request{Backend: "claude", Prompt: "q"}, fault.InvalidInput, "workspace.missing"},
		{"relative workspace", Request{Backend: "claude", Prompt: "q", Workspace: "rel/dir"}, fault.InvalidInput, "workspace.relative"},
		{"nonexistent workspace", Request{Backend: "claude", Prompt: "q", Workspace: "/nonexistent/x"}, fault.InvalidInput, "workspace.not_found"},
		{"workspace is a file", Request{Backend: "claude", Prompt: "q", Workspace: file}, fault.InvalidInput, "workspace.not_directory"},
		{"oversize prompt", Request{Backend: "claude", Prompt: strings.Repeat("x", adapter.MaxPromptBytes+1), Workspace: dir}, fault.InputLimit, "prompt.size"},
		{"invalid utf8", Request{Backend: "claude", Prompt: "\xff", Workspace: dir}, fault.InvalidInput, "prompt.encoding"},
		{"unknown backend", Request{Backend: "nope", Prompt: "q", Workspace: dir}, fault.InvalidInput, "backend.unknown"},
		{"flag model", Request{Backend: "claude", Prompt: "q", Workspace: dir, Model: "--yolo"}, fault.InvalidInput, "model.invalid"},
		{"bad effort", Request{Backend: "claude", Prompt: "q", Workspace: dir, Effort: "ultra"}, fault.InvalidInput, "effort.invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &countingBackend{}
			r, _ := newRunner(t, b)
			o := r.Run(context.Background(), tt.req)
			if o.Error == nil || o.Error.Code != string(tt.code) || o.Error.Reason != tt.reason || o.Status != Failed {
				t.Fatalf("outcome = %+v, want %s/%s", o.Error, tt.code, tt.reason)
			}
			if b.runs.Load() != 0 {
				t.Fatal("backend ran")
			}
		})
	}
}

func TestNestedTurnRefusedAndRecorded(t *testing.T) {
	b := &countingBackend{}
	r, ev := newRunner(t, b, config.NestedTurnVar+"=1")
	o := r.Run(context.Background(), Request{Backend: "claude", Prompt: "q", Workspace: t.TempDir()})
	if o.Error == nil || o.Error.Code != string(fault.NestedTurn) || b.runs.Load() != 0 {
		t.Fatalf("outcome = %+v", o.Error)
	}
	if evs := ev.Events(); len(evs) != 1 || evs[0].Type != event.TypeRefusal || evs[0].Reason != "nested_turn" {
		t.Fatalf("events = %+v", evs)
	}
}

// TestBackendRefusalsAreRecorded: a backend that refuses the turn (its
// login, its profile, a policy check) leaves one refusal event with the
// code and reason; a turn that merely failed leaves none.
func TestBackendRefusalsAreRecorded(t *testing.T) {
	tests := []struct {
		err  error
		want []string // "type code reason backend model" of each event
	}{
		{fault.New(fault.AuthRequired, "codex.not_signed_in", "x"), []string{"refusal AUTH_REQUIRED codex.not_signed_in claude m"}},
		{fault.New(fault.AuthRequired, "claude.authentication_failed", "x"), []string{"refusal AUTH_REQUIRED claude.authentication_failed claude m"}},
		{fault.New(fault.SandboxUnavailable, "claude.startup_report", "x"), []string{"refusal SANDBOX_UNAVAILABLE claude.startup_report claude m"}},
		{fault.New(fault.PolicyDenied, "consent.model_mismatch", "x"), []string{"refusal POLICY_DENIED consent.model_mismatch claude m"}},
		{fault.New(fault.Timeout, "turn.deadline", "x"), nil},
		{fault.New(fault.ProtocolError, "claude.stream", "x"), nil},
		{os.ErrClosed, nil},
	}
	for _, tt := range tests {
		t.Run(fault.From(tt.err).Reason, func(t *testing.T) {
			r, ev := newRunner(t, &countingBackend{err: tt.err})
			r.Run(context.Background(), Request{Backend: "claude", Prompt: "q", Workspace: t.TempDir(), Model: "m"})
			var got []string
			for _, e := range ev.Events() {
				got = append(got, strings.Join([]string{string(e.Type), e.Code, e.Reason, e.Backend, e.Model}, " "))
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
		})
	}
}

func TestAnswerIsRedactedBeforeTruncation(t *testing.T) {
	secret := "sk-ant-api03-" + strings.Repeat("Q", 90)
	// The secret straddles the 1 MiB limit: truncating first would leak a
	// prefix of it.
	text := strings.Repeat("a", MaxOutputBytes-20) + " " + secret
	b := &countingBackend{res: adapter.Result{Text: text, SessionID: "s", Model: "m"}}
	r, _ := newRunner(t, b)
	o := r.Run(context.Background(), Request{Backend: "claude", Prompt: "q", Workspace: t.TempDir()})
	if o.Status != Completed || o.Error != nil {
		t.Fatalf("outcome = %+v", o.Error)
	}
	if strings.Contains(o.Output, "QQQQQQ") || strings.Contains(o.Output, "sk-ant") {
		t.Fatal("a secret fragment survived truncation")
	}
	if len(o.Output) > MaxOutputBytes {
		t.Fatalf("output %d bytes > limit", len(o.Output))
	}
}

func TestFailureIsTypedAndStatusMapped(t *testing.T) {
	tests := []struct {
		err    error
		status Status
	}{
		{fault.New(fault.Aborted, "turn.cancelled", "x"), Cancelled},
		{fault.New(fault.Timeout, "turn.deadline", "x"), TimedOut},
		{fault.New(fault.SandboxUnavailable, "claude.startup_report", "x"), Failed},
		{os.ErrClosed, Failed},
	}
	for _, tt := range tests {
		b := &countingBackend{err: tt.err}
		r, _ := newRunner(t, b)
		o := r.Run(context.Background(), Request{Backend: "claude", Prompt: "q", Workspace: t.TempDir(), SessionMode: "new"})
		if o.Status != tt.status || o.Output != "" || o.Error == nil {
			t.Fatalf("err %v: outcome %+v", tt.err, o)
		}
		if tt.err == os.ErrClosed && (o.Error.Code != "PROCESS_ERROR" || strings.Contains(o.Error.Message, "closed")) {
			t.Fatalf("unknown error leaked or mis-typed: %+v", o.Error)
		}
	}
}

func TestSessionContinuationAndBusy(t *testing.T) {
	b := &countingBackend{res: adapter.Result{Text: "ok", SessionID: "native-1"}}
	r, _ := newRunner(t, b)
	ws := t.TempDir()
	o := r.Run(context.Background(), Request{Backend: "claude", Prompt: "q", Workspace: ws})
	if o.SessionHandle == nil || !strings.HasPrefix(*o.SessionHandle, "syn_sess_") || !o.ContinuationAvailable {
		t.Fatalf("outcome = %+v", o)
	}
	o2 := r.Run(context.Background(), Request{Backend: "claude", Prompt: "q", Workspace: t.TempDir(), SessionHandle: *o.SessionHandle})
	if o2.Error == nil || o2.Error.Code != string(fault.SessionInvalid) {
		t.Fatalf("foreign workspace: %+v", o2.Error)
	}
	o3 := r.Run(context.Background(), Request{Backend: "claude", Prompt: "q", Workspace: ws, SessionHandle: *o.SessionHandle})
	if o3.Error != nil || o3.Turn != 2 {
		t.Fatalf("continuation: %+v", o3)
	}
}

// writingBackend writes into the workspace despite its profile.
type writingBackend struct{ countingBackend }

func (w *writingBackend) Run(ctx context.Context, t adapter.Turn) (adapter.Result, error) {
	os.WriteFile(filepath.Join(t.Workspace, "PWNED.txt"), []byte("x"), 0o644)
	return adapter.Result{Text: "done", SessionID: "s"}, nil
}

func TestWorkspaceChangeWithholdsAnswer(t *testing.T) {
	r, ev := newRunner(t, &writingBackend{})
	o := r.Run(context.Background(), Request{Backend: "claude", Prompt: "q", Workspace: t.TempDir()})
	if o.Error == nil || o.Error.Reason != "workspace_changed" || o.Output != "" {
		t.Fatalf("outcome = %+v", o)
	}
	// One refusal is one event: unchanged records it with its
	// detail, and the failed run must not record it again.
	var got []string
	for _, e := range ev.Events() {
		got = append(got, strings.Join([]string{string(e.Type), e.Code, e.Reason, e.Detail}, " "))
	}
	want := []string{"refusal SANDBOX_UNAVAILABLE workspace_changed 1 path(s) changed"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

func TestContextFilesMustStayInTheWorkspace(t *testing.T) {
	for _, f := range []string{"", "/etc/passwd", "../x", "a/../../x", `\\server\share`} {
		b := &countingBackend{}
		r, _ := newRunner(t, b)
		o := r.Run(context.Background(), Request{Backend: "claude", Prompt: "q", Workspace: t.TempDir(), ContextFiles: []string{"ok.go", f}})
		if o.Error == nil || o.Error.Reason != "context_file.invalid" || b.runs.Load() != 0 {
			t.Errorf("%q: outcome %+v", f, o.Error)
		}
	}
	if err := ContextFile("internal/turn/prompt.go"); err != nil {
		t.Fatal(err)
	}
}
