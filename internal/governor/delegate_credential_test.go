package governor_test

import (
	"context"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/consent"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/governor"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/policy"
	"github.com/coagent8/coagent8/internal/turn"
)

// flatCatalog prices every model at 10 USD per million output tokens.
type flatCatalog struct{}

func (flatCatalog) Len() int { return 1 }
func (flatCatalog) Quote(_, model string) policy.Quote {
	return policy.Quote{ID: model, PerMillion: big.NewRat(10, 1), Match: policy.MatchExact}
}

// declining is a job consent that records each question and declines it.
type declining struct{ asked []string }

func (d *declining) AskJob(_ context.Context, q governor.JobQuestion) error {
	d.asked = append(d.asked, q.Decision.Model)
	return fault.New(fault.PolicyDenied, consent.ReasonDeclined, "the user declined")
}

// TestDelegateNoCredential: a delegate job whose backend's gate provider
// (Claude Code: anthropic, Codex: openai) has no gate.credentials entry is
// refused AUTH_REQUIRED delegate.no_credential before the user is asked,
// with one refusal event; so is an unusable gate section or a reference
// the gate will not parse (INVALID_INPUT config.gate); with the
// credential the user is asked.
func TestDelegateNoCredential(t *testing.T) {
	const allow = `"governance":{"models":{"allow":["m-default"]}}`
	tests := []struct {
		name, cfg, backend string
		want               string // "CODE reason"
		asked              []string
		refusals           []string
	}{
		{"no gate section", `{` + allow + `}`, "claude", "AUTH_REQUIRED delegate.no_credential", nil,
			[]string{"AUTH_REQUIRED delegate.no_credential gate.credentials"}},
		{"another provider's credential", `{` + allow + `,"gate":{"credentials":{"openai":"env:K"}}}`, "claude",
			"AUTH_REQUIRED delegate.no_credential", nil, []string{"AUTH_REQUIRED delegate.no_credential gate.credentials"}},
		{"codex needs openai", `{` + allow + `,"gate":{"credentials":{"anthropic":"env:K"}}}`, "codex",
			"AUTH_REQUIRED delegate.no_credential", nil, []string{"AUTH_REQUIRED delegate.no_credential gate.credentials"}},
		{"literal credential: the whole file is unusable", `{` + allow + `,"gate":{"credentials":{"anthropic":"sk-ant-literal"}},"delegate":{}}`, "claude",
			"POLICY_DENIED config.literal_credential", nil, []string{"POLICY_DENIED config.literal_credential "}},
		{"gate not an object", `{` + allow + `,"gate":[],"delegate":{}}`, "claude",
			"INVALID_INPUT config.gate", nil, []string{"INVALID_INPUT config.gate gate.credentials"}},
		{"unknown gate key", `{` + allow + `,"gate":{"credential":{"anthropic":"env:K"}},"delegate":{}}`, "claude",
			"INVALID_INPUT config.gate", nil, []string{"INVALID_INPUT config.gate gate.credentials"}},
		{"credentials not strings", `{` + allow + `,"gate":{"credentials":{"anthropic":1}},"delegate":{}}`, "claude",
			"INVALID_INPUT config.gate", nil, []string{"INVALID_INPUT config.gate gate.credentials"}},
		{"empty env name", `{` + allow + `,"gate":{"credentials":{"anthropic":"env:"}},"delegate":{}}`, "claude",
			"INVALID_INPUT config.gate", nil, []string{"INVALID_INPUT config.gate gate.credentials"}},
		{"relative file reference", `{` + allow + `,"gate":{"credentials":{"anthropic":"file:key.txt"}},"delegate":{}}`, "claude",
			"INVALID_INPUT config.gate", nil, []string{"INVALID_INPUT config.gate gate.credentials"}},
		{"another provider's bad reference: the gate will not open", `{` + allow + `,"gate":{"credentials":{"anthropic":"env:K","openai":"env:"}},"delegate":{}}`, "claude",
			"INVALID_INPUT config.gate", nil, []string{"INVALID_INPUT config.gate gate.credentials"}},
		{"one reference for both providers: the gate will not open", `{` + allow + `,"gate":{"credentials":{"anthropic":"env:K","openai":"env:K"}},"delegate":{}}`, "claude",
			"INVALID_INPUT config.gate", nil, []string{"INVALID_INPUT config.gate gate.credentials"}},
		{"declared variable unset", `{` + allow + `,"gate":{"credentials":{"anthropic":"env:UNSET_K"}},"delegate":{}}`, "claude",
			"AUTH_REQUIRED delegate.credential_unresolved", nil, []string{"AUTH_REQUIRED delegate.credential_unresolved gate.credentials"}},
		{"declared file missing", `{` + allow + `,"gate":{"credentials":{"anthropic":"file:/nonexistent/coagent8-key"}},"delegate":{}}`, "claude",
			"AUTH_REQUIRED delegate.credential_unresolved", nil, []string{"AUTH_REQUIRED delegate.credential_unresolved gate.credentials"}},
		{"a denied model is refused as denied first", `{"governance":{"models":{"deny":["m-default"]}}}`, "claude",
			"POLICY_DENIED governance.deny", nil, []string{`POLICY_DENIED governance.deny governance.models.deny["m-default"]`}},
		{"credential declared: asked", `{` + allow + `,"gate":{"credentials":{"anthropic":"env:K"}},"delegate":{}}`, "claude",
			"POLICY_DENIED consent.declined", []string{"m-default"}, []string{"POLICY_DENIED consent.declined governance.models.allow[\"m-default\"]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, events := delegateGovernor(t, tt.cfg)
			ws, _ := gitRepo(t)
			c := &declining{}
			_, err := g.Delegate(context.Background(), governor.DelegateTask{Task: "edit a.go", Backend: tt.backend, Workspace: ws,
				Base: governor.BaseUncommitted, Budget: job.Budget{MaxUSD: 1}, Consent: c})
			got := ""
			if fe := fault.From(err); err != nil {
				got = string(fe.Code) + " " + fe.Reason
			}
			var refusals []string
			for _, e := range events.Events() {
				if e.Type == event.TypeRefusal {
					refusals = append(refusals, e.Code+" "+e.Reason+" "+e.Rule)
				}
			}
			if d := cmp.Diff([]any{tt.want, tt.asked, tt.refusals}, []any{got, c.asked, refusals}); d != "" {
				t.Errorf("Delegate: (-want +got):\n%s\nerror: %v", d, err)
			}
		})
	}
}

// delegateGovernor is a governor over fake claude and codex backends (the
// default model "m-default") with a price for every model.
func delegateGovernor(t *testing.T, cfg string) (*governor.Governor, *event.Memory) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	// K is the variable the configurations declare (env:K): a synthetic
	// value, so the declared credential resolves.
	env := config.FromList([]string{"HOME=/home/u", "K=sk-ant-synthetic-" + strings.Repeat("k", 24)})
	events := &event.Memory{}
	runner, err := turn.New(turn.Options{Env: env, Backends: []adapter.Backend{&fakeBackend{name: "claude"}, &fakeBackend{name: "codex"}}, Events: events})
	if err != nil {
		t.Fatal(err)
	}
	g, err := governor.New(governor.Options{Env: env, Runner: runner, ConfigPath: path, Events: events, Catalog: flatCatalog{}})
	if err != nil {
		t.Fatal(err)
	}
	return g, events
}
