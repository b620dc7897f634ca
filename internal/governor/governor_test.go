package governor_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/consent"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/governor"
	"github.com/coagent8/coagent8/internal/policy"
	"github.com/coagent8/coagent8/internal/turn"
)

// fakeBackend answers every turn; reported overrides the model it claims
// to have run ("" = the one it was given). Its default model is "m-default".
type fakeBackend struct {
	name     string
	reported string
	text     string
	auth     string // the probe's AuthStatus
	runErr   error  // returned by Run instead of an answer

	mu     sync.Mutex
	models []string // the model of each Run, in order
}

func (f *fakeBackend) Name() string { return f.name }
func (f *fakeBackend) Probe(context.Context) adapter.Probe {
	return adapter.Probe{Backend: f.name, DefaultModel: "m-default", AuthStatus: f.auth}
}

func (f *fakeBackend) Run(_ context.Context, t adapter.Turn) (adapter.Result, error) {
	f.mu.Lock()
	f.models = append(f.models, t.Model)
	f.mu.Unlock()
	if f.runErr != nil {
		return adapter.Result{}, f.runErr
	}
	model := f.reported
	if model == "" {
		model = t.Model
	}
	if t.CheckModel != nil {
		if err := t.CheckModel(model); err != nil {
			return adapter.Result{}, err
		}
	}
	text := f.text
	if text == "" {
		text = "answer"
	}
	return adapter.Result{Text: text, Model: model}, nil
}

func (f *fakeBackend) ran() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.models...)
}

// fakeConsent is a surface's Consent with a scripted reply; it counts
// the questions it was asked.
type fakeConsent struct {
	answer governor.Answer
	err    error
	asked  []string
}

func (c *fakeConsent) Ask(_ context.Context, d policy.Decision) (governor.Answer, error) {
	c.asked = append(c.asked, d.Model)
	return c.answer, c.err
}

// rig is a governor over fake claude and agy backends with the given
// configuration file content. events holds what the governor, consent
// and the runner record, so the tests see every refusal of a governed
// turn, and a refusal recorded twice as two.
type rig struct {
	gov    *governor.Governor
	events *event.Memory
	claude *fakeBackend
	agy    *fakeBackend
	gate   *consent.Gate
}

func newRig(t *testing.T, cfg string, claude *fakeBackend) *rig {
	t.Helper()
	return newRigEnv(t, cfg, claude, config.FromList([]string{"HOME=/home/u"}))
}

func newRigEnv(t *testing.T, cfg string, claude *fakeBackend, env config.Env) *rig {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if claude == nil {
		claude = &fakeBackend{}
	}
	claude.name = "claude"
	r := &rig{events: &event.Memory{}, claude: claude, agy: &fakeBackend{name: "agy"}}
	// One sink for the runner and the governor, as wired in production,
	// so a refusal recorded twice shows as two (issue 19 item 4).
	runner, err := turn.New(turn.Options{Env: env, Backends: []adapter.Backend{r.claude, r.agy}, Events: r.events})
	if err != nil {
		t.Fatal(err)
	}
	if r.gov, err = governor.New(governor.Options{Env: env, Runner: runner, ConfigPath: path, Events: r.events}); err != nil {
		t.Fatal(err)
	}
	if r.gate, err = consent.New(consent.Options{Sink: r.events}); err != nil {
		t.Fatal(err)
	}
	return r
}

// refusals lists "CODE reason rule model" of each recorded refusal.
func (r *rig) refusals() []string {
	var out []string
	for _, e := range r.events.Events() {
		if e.Type == event.TypeRefusal {
			out = append(out, e.Code+" "+e.Reason+" "+e.Rule+" "+e.Model)
		}
	}
	return out
}

const (
	allowM   = `{"governance":{"models":{"allow":["m-ok","m-default"]}}}`
	denyM    = `{"governance":{"models":{"deny":["m-bad"],"allow":["m-default"]}}}`
	askM     = `{"governance":{"models":{"ask":["m-ask"],"allow":["m-default"]}}}`
	badGov   = `{"governance":{"askAbovePrice":-1}}`
	codexRt  = `{"routing":{"allowedBackends":["codex"]},"governance":{"models":{"allow":["m-ok"]}}}`
	geminiRt = `{"routing":{"allowedBackends":["gemini"]},"governance":{"models":{"allow":["m-ok"]}}}`
)

// TestRun is the governed path's decision table: what ran (the model each
// backend was given), the outcome's status, error code and reason, the
// questions consent was asked and the refusals recorded.
func TestRun(t *testing.T) {
	approve := func() *fakeConsent { return &fakeConsent{} }
	tests := []struct {
		name     string
		cfg      string
		backend  string
		model    string
		claude   *fakeBackend
		consent  func(*rig) governor.Consent
		wantRan  []string // models claude ran
		wantAgy  []string // models agy ran
		want     string   // "status code reason"
		asked    []string
		refusals []string
		warnings []string
		pending  bool
	}{
		{name: "allow rule runs the approved model", cfg: allowM, model: "m-ok", wantRan: []string{"m-ok"},
			want: "completed  "},
		{name: "default model is resolved and governed", cfg: allowM, wantRan: []string{"m-default"}, want: "completed  "},
		{name: "deny rule refuses before the backend", cfg: denyM, model: "m-bad",
			want:     "failed POLICY_DENIED governance.deny",
			refusals: []string{`POLICY_DENIED governance.deny governance.models.deny["m-bad"] m-bad`}},
		{name: "ask refused by the terminal", cfg: askM, model: "m-ask",
			consent:  func(r *rig) governor.Consent { return r.gate.Refusal() },
			want:     "failed POLICY_DENIED consent.unsupported_client",
			refusals: []string{`POLICY_DENIED consent.unsupported_client governance.models.ask["m-ask"] m-ask`}},
		{name: "ask approved by the user", cfg: askM, model: "m-ask",
			consent: func(*rig) governor.Consent { return &fakeConsent{answer: governor.Answer{Warning: "not remembered"}} },
			wantRan: []string{"m-ask"}, want: "completed  ", asked: []string{"m-ask"}, warnings: []string{"not remembered"}},
		{name: "ask pending out of band runs nothing", cfg: askM, model: "m-ask",
			consent: func(*rig) governor.Consent { return &fakeConsent{answer: governor.Answer{Pending: true}} },
			want:    "  ", asked: []string{"m-ask"}, pending: true},
		{name: "ask declined", cfg: askM, model: "m-ask",
			consent: func(*rig) governor.Consent {
				return &fakeConsent{err: fault.New(fault.PolicyDenied, consent.ReasonDeclined, "the user declined")}
			},
			want: "failed POLICY_DENIED consent.declined", asked: []string{"m-ask"}},
		{name: "malformed governance fails closed", cfg: badGov, model: "m-ok",
			want:     "failed POLICY_DENIED config.governance_invalid",
			refusals: []string{"POLICY_DENIED config.governance_invalid  m-ok"}},
		{name: "backend outside routing", cfg: codexRt, model: "m-ok",
			want:     "failed POLICY_DENIED routing.backend_not_allowed",
			refusals: []string{"POLICY_DENIED routing.backend_not_allowed routing.allowedBackends m-ok"}},
		{name: "gemini routes to agy and admits it", cfg: geminiRt, backend: "gemini", model: "m-ok",
			wantAgy: []string{"m-ok"}, want: "completed  "},
		{name: "reported model mismatch", cfg: allowM, model: "m-ok", claude: &fakeBackend{reported: "m-other"},
			wantRan: []string{"m-ok"}, want: "failed POLICY_DENIED consent.model_mismatch",
			refusals: []string{"POLICY_DENIED consent.model_mismatch  m-ok"}},
		{name: "not logged in is refused before asking, once", cfg: askM, model: "m-ask", claude: &fakeBackend{auth: "unauthenticated"},
			want:     "failed AUTH_REQUIRED claude.not_logged_in",
			refusals: []string{"AUTH_REQUIRED claude.not_logged_in  m-ask"}},
		{name: "allowed model refused by the backend's login, once", cfg: allowM, model: "m-ok",
			claude:  &fakeBackend{runErr: fault.New(fault.AuthRequired, "codex.not_signed_in", "Codex is not signed in.")},
			wantRan: []string{"m-ok"}, want: "failed AUTH_REQUIRED codex.not_signed_in",
			refusals: []string{"AUTH_REQUIRED codex.not_signed_in  m-ok"}},
		{name: "a turn that broke is no refusal", cfg: allowM, model: "m-ok",
			claude:  &fakeBackend{runErr: fault.New(fault.ProtocolError, "claude.stream", "the stream ended early")},
			wantRan: []string{"m-ok"}, want: "failed PROTOCOL_ERROR claude.stream"},
		{name: "no consent is refused first", cfg: allowM, model: "m-ok",
			consent: func(*rig) governor.Consent { return nil },
			want:    "failed PROCESS_ERROR governor.consent_required"},
		{name: "bad input before governance", cfg: allowM, model: "--yolo", want: "failed INVALID_INPUT model.invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, tt.cfg, tt.claude)
			c := governor.Consent(approve())
			if tt.consent != nil {
				c = tt.consent(r)
			}
			backend := tt.backend
			if backend == "" {
				backend = "claude"
			}
			res := r.gov.Run(context.Background(), governor.Turn{Consent: c, Request: turn.Request{
				Backend: backend, Workspace: t.TempDir(), Prompt: "q", Model: tt.model, SessionMode: "none"}})
			var asked []string
			if fc, ok := c.(*fakeConsent); ok {
				asked = fc.asked
			}
			got := []any{r.claude.ran(), r.agy.ran(), summary(res.Outcome), asked, r.refusals(), res.Outcome.Warnings, res.Pending}
			want := []any{tt.wantRan, tt.wantAgy, tt.want, tt.asked, tt.refusals, tt.warnings, tt.pending}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("Run (-want +got):\n%s", d)
			}
		})
	}
}

// summary is "status code reason" of an outcome.
func summary(o turn.Outcome) string {
	code, reason := "", ""
	if o.Error != nil {
		code, reason = o.Error.Code, o.Error.Reason
	}
	return string(o.Status) + " " + code + " " + reason
}

// TestRunForegroundAttach: Attach sees the admitted request (the approved
// model pinned, CheckModel set) before the run and is detached after it.
func TestRunForegroundAttach(t *testing.T) {
	r := newRig(t, allowM, nil)
	var log []string
	res := r.gov.Run(context.Background(), governor.Turn{Consent: &fakeConsent{},
		Request: turn.Request{Backend: "claude", Workspace: t.TempDir(), Prompt: "q", SessionMode: "none"},
		Attach: func(req *turn.Request) func() {
			log = append(log, "attach "+req.Backend+" "+req.Model, "pinned "+boolText(req.CheckModel != nil))
			return func() { log = append(log, "detach") }
		}})
	want := []string{"attach claude m-default", "pinned true", "detach"}
	if d := cmp.Diff(want, log); d != "" || res.Outcome.Error != nil {
		t.Errorf("attach log (-want +got):\n%s\noutcome error %+v", d, res.Outcome.Error)
	}
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestRunBackground: wait:false answers running with the handle at once
// and hands the final outcome to Finished; without a session it is
// refused.
func TestRunBackground(t *testing.T) {
	tests := []struct {
		mode, want, final string
	}{
		{"new", "running  ", "completed  "},
		{"none", "failed INVALID_INPUT wait.needs_session", ""},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			r := newRig(t, allowM, nil)
			done := make(chan turn.Outcome, 1)
			res := r.gov.Run(context.Background(), governor.Turn{Consent: &fakeConsent{}, Background: true,
				Finished: func(o turn.Outcome) { done <- o },
				Request:  turn.Request{Backend: "claude", Workspace: t.TempDir(), Prompt: "q", SessionMode: tt.mode}})
			final := ""
			if tt.final != "" {
				final = summary(<-done)
				if res.Outcome.SessionHandle == nil {
					t.Error("a running outcome without a session handle")
				}
			}
			if d := cmp.Diff([]string{tt.want, tt.final}, []string{summary(res.Outcome), final}); d != "" {
				t.Errorf("background (-want +got):\n%s", d)
			}
		})
	}
}

// TestNew: a governor that could not refuse is not built.
func TestNew(t *testing.T) {
	runner, err := turn.New(turn.Options{Backends: []adapter.Backend{&fakeBackend{name: "claude"}}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		o    governor.Options
		want string
	}{
		{"no runner", governor.Options{ConfigPath: "/c", Events: &event.Memory{}}, "governor.runner"},
		{"no config path", governor.Options{Runner: runner, Events: &event.Memory{}}, "governor.config_path"},
		{"no events", governor.Options{Runner: runner, ConfigPath: "/c"}, "governor.events"},
		{"complete", governor.Options{Runner: runner, ConfigPath: "/c", Events: &event.Memory{}}, ""},
	}
	for _, tt := range tests {
		_, err := governor.New(tt.o)
		got := ""
		if err != nil {
			got = fault.From(err).Reason
		}
		if got != tt.want {
			t.Errorf("%s: New reason = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// resolvingBackend is a fakeBackend whose model resolution (the
// metadata-only probe that verifies the profile report) fails with err.
type resolvingBackend struct {
	*fakeBackend
	err error
}

func (b resolvingBackend) Resolve(context.Context, string, string) (adapter.Resolution, error) {
	return adapter.Resolution{}, b.err
}

// TestRunResolutionRefusalIsRecorded: a refusal raised by the model
// resolution probe (its profile report did not verify) is one security
// event, as a refusal of the run is; a resolution that merely broke is
// none. Before, neither was recorded.
func TestRunResolutionRefusalIsRecorded(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		want     string
		refusals []string
	}{
		{"profile report refused", fault.New(fault.SandboxUnavailable, "claude.startup_report", "the profile did not verify"),
			"failed SANDBOX_UNAVAILABLE claude.startup_report", []string{"SANDBOX_UNAVAILABLE claude.startup_report  m-ok"}},
		{"probe broke", fault.New(fault.ProcessError, "claude.exit", "the CLI exited"),
			"failed PROCESS_ERROR claude.exit", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events := &event.Memory{}
			env := config.FromList([]string{"HOME=/home/u"})
			claude := resolvingBackend{&fakeBackend{name: "claude"}, tt.err}
			runner, err := turn.New(turn.Options{Env: env, Backends: []adapter.Backend{claude}, Events: events})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "config.json")
			if err := os.WriteFile(path, []byte(allowM), 0o600); err != nil {
				t.Fatal(err)
			}
			gov, err := governor.New(governor.Options{Env: env, Runner: runner, ConfigPath: path, Events: events})
			if err != nil {
				t.Fatal(err)
			}
			res := gov.Run(context.Background(), governor.Turn{Consent: &fakeConsent{}, Request: turn.Request{
				Backend: "claude", Workspace: t.TempDir(), Prompt: "q", Model: "m-ok", SessionMode: "none"}})
			r := &rig{events: events}
			got := []any{summary(res.Outcome), r.refusals(), claude.ran()}
			want := []any{tt.want, tt.refusals, []string(nil)}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("Run (-want +got):\n%s", d)
			}
		})
	}
}
