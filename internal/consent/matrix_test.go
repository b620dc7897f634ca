package consent

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// matrix is the R-042 answer matrix with the reason each path must give.
// "viaSDK" is the reason when the Go SDK client validates the answer against
// the form first (legacy protocols), where a malformed answer never reaches
// coagent8 as such and the elicitation fails instead.
var matrix = []struct {
	name       string
	answer     answer
	remember   bool // decision is in the rememberable class
	want       string
	viaSDK     string
	remembered bool
}{
	{"accept empty", accept(map[string]any{}), true, "POLICY_DENIED consent.invalid_answer", "POLICY_DENIED consent.elicitation_failed", false},
	{"accept no content", accept(nil), true, "POLICY_DENIED consent.invalid_answer", "POLICY_DENIED consent.invalid_answer", false},
	{"accept string true", accept(map[string]any{"approve": "true"}), true, "POLICY_DENIED consent.invalid_answer", "POLICY_DENIED consent.elicitation_failed", false},
	{"accept number 1", accept(map[string]any{"approve": 1}), true, "POLICY_DENIED consent.invalid_answer", "POLICY_DENIED consent.elicitation_failed", false},
	{"accept false", accept(map[string]any{"approve": false}), true, "POLICY_DENIED consent.not_approved", "POLICY_DENIED consent.not_approved", false},
	{"accept false remember", accept(map[string]any{"approve": false, "remember": true}), true, "POLICY_DENIED consent.not_approved", "POLICY_DENIED consent.not_approved", false},
	{"decline", &mcpDecline, true, "POLICY_DENIED consent.declined", "POLICY_DENIED consent.declined", false},
	{"cancel", &mcpCancel, true, "POLICY_DENIED consent.cancelled", "POLICY_DENIED consent.cancelled", false},
	{"accept true", accept(map[string]any{"approve": true}), true, "ran remembered=false", "ran remembered=false", false},
	{"accept true remember", accept(map[string]any{"approve": true, "remember": true}), true, "ran remembered=true", "ran remembered=true", true},
	// an over-limit model runs once; remember does not apply.
	{"over limit remember", accept(map[string]any{"approve": true, "remember": true}), false, "ran remembered=false", "ran remembered=false", false},
}

// TestMatrixLatestProtocol drives the 2026-07-28 InputRequests flow with a
// host that passes answers through unvalidated.
func TestMatrixLatestProtocol(t *testing.T) {
	for _, tt := range matrix {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, askDecision(tt.remember), time.Minute)
			cs := h.connect(t, "", func() answer { return nil }, true)
			got := h.callManual(t, cs, tt.answer, nil)
			h.checkOutcome(t, got, tt.want, tt.remembered)
		})
	}
}

// TestMatrixLegacyProtocols drives elicitation/create on the two older
// revisions with the SDK client and a scripted handler.
func TestMatrixLegacyProtocols(t *testing.T) {
	for _, proto := range []string{"2025-11-25", "2025-06-18"} {
		for _, tt := range matrix {
			t.Run(proto+"/"+tt.name, func(t *testing.T) {
				h := newHarness(t, askDecision(tt.remember), time.Minute)
				cs := h.connect(t, proto, func() answer { return tt.answer }, false)
				got, err := call(t, cs)
				if err != nil {
					t.Fatalf("CallTool: %v", err)
				}
				h.checkOutcome(t, got, tt.viaSDK, tt.remembered)
				if h.elicits.Load() != 1 {
					t.Errorf("elicitations = %d, want 1", h.elicits.Load())
				}
			})
		}
	}
}

// TestLatestProtocolAutomaticClient uses the SDK client's own
// multi-round-trip handling end to end.
func TestLatestProtocolAutomaticClient(t *testing.T) {
	for _, tt := range []struct {
		name, want string
		a          answer
	}{
		{"approve", "ran remembered=false", accept(map[string]any{"approve": true})},
		{"decline", "POLICY_DENIED consent.declined", &mcpDecline},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, askDecision(true), time.Minute)
			cs := h.connect(t, "", func() answer { return tt.a }, false)
			got, err := call(t, cs)
			if err != nil {
				t.Fatal(err)
			}
			h.checkOutcome(t, got, tt.want, false)
		})
	}
	// A malformed answer is rejected by the SDK client itself: the call
	// fails and the backend never starts.
	h := newHarness(t, askDecision(true), time.Minute)
	cs := h.connect(t, "", func() answer { return accept(map[string]any{"approve": "true"}) }, false)
	if _, err := call(t, cs); err == nil {
		t.Error("SDK client accepted a non-boolean approve")
	}
	if h.starts.Load() != 0 {
		t.Error("backend started")
	}
}

func TestNoElicitationCapability(t *testing.T) {
	for _, proto := range []string{"", "2025-11-25", "2025-06-18"} {
		t.Run("proto="+proto, func(t *testing.T) {
			h := newHarness(t, askDecision(true), time.Minute)
			cs := h.connect(t, proto, nil, false)
			got, err := call(t, cs)
			if err != nil {
				t.Fatalf("CallTool: %v (must be a POLICY_DENIED result, not a protocol error)", err)
			}
			h.checkOutcome(t, got, "POLICY_DENIED consent.unsupported_client", false)
		})
	}
}

func TestTimeout(t *testing.T) {
	for _, proto := range []string{"2025-11-25", "2025-06-18"} {
		t.Run(proto, func(t *testing.T) {
			h := newHarness(t, askDecision(true), 300*time.Millisecond)
			cs := h.connect(t, proto, func() answer { return nil }, false)
			got, err := call(t, cs)
			if err != nil {
				t.Fatal(err)
			}
			h.checkOutcome(t, got, "POLICY_DENIED consent.timeout", false)
		})
	}
	t.Run("latest: answer after the deadline", func(t *testing.T) {
		h := newHarness(t, askDecision(true), time.Minute)
		cs := h.connect(t, "", func() answer { return nil }, true)
		got := h.callManual(t, cs, accept(map[string]any{"approve": true}), func() { h.clock.Store(120) })
		h.checkOutcome(t, got, "POLICY_DENIED consent.timeout", false)
	})
}

// TestRetryState: an answer counts once, only for the request it answers.
func TestRetryState(t *testing.T) {
	ok := accept(map[string]any{"approve": true})
	t.Run("unsolicited answer", func(t *testing.T) {
		h := newHarness(t, askDecision(true), time.Minute)
		cs := h.connect(t, "", func() answer { return nil }, true)
		res, err := cs.CallTool(t.Context(), &mcpParams{Name: "consult", Arguments: callArgs,
			InputResponses: mcpResponses{inputKey: (*mcpElicitResult)(ok)}})
		if err != nil {
			t.Fatal(err)
		}
		h.checkOutcome(t, resultText(res), "POLICY_DENIED consent.invalid_state", false)
	})
	t.Run("forged state", func(t *testing.T) {
		h := newHarness(t, askDecision(true), time.Minute)
		cs := h.connect(t, "", func() answer { return nil }, true)
		// Well-formed state signed with another process's key.
		other, _ := New(Options{Sink: h.sink})
		res, err := cs.CallTool(t.Context(), &mcpParams{Name: "consult", Arguments: callArgs, RequestState: other.sign(state{V: 1,
			Backend: "codex", Model: "gpt-x", Expires: time.Now().Add(time.Hour).Unix(), Nonce: "n"}),
			InputResponses: mcpResponses{inputKey: (*mcpElicitResult)(ok)}})
		if err != nil {
			t.Fatal(err)
		}
		h.checkOutcome(t, resultText(res), "POLICY_DENIED consent.invalid_state", false)
	})
	t.Run("state for another model", func(t *testing.T) {
		h := newHarness(t, askDecision(true), time.Minute)
		cs := h.connect(t, "", func() answer { return nil }, true)
		got := h.callManual(t, cs, ok, func() { h.decision.Model = "gpt-y" })
		if got != "POLICY_DENIED consent.invalid_state" || h.starts.Load() != 0 {
			t.Errorf("result %q, starts %d", got, h.starts.Load())
		}
	})
	// The answer approves the question the user was shown, for the call
	// that asked it: a retry that changes what the form showed (the
	// reasoning effort) or the call itself (its arguments, or another
	// tool) is refused, and nothing runs.
	t.Run("retry with another reasoning effort", func(t *testing.T) {
		h := newHarness(t, askDecision(true), time.Minute)
		h.decision.Effort = "low"
		cs := h.connect(t, "", func() answer { return nil }, true)
		got := h.callManual(t, cs, ok, func() { h.decision.Effort = "max" })
		if got != "POLICY_DENIED consent.invalid_state" || h.starts.Load() != 0 {
			t.Errorf("result %q, starts %d", got, h.starts.Load())
		}
	})
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
	}{
		{"retry with other arguments", "consult", map[string]any{"proposal": promptCanary, "workspace_path": "/elsewhere"}},
		{"retry with another prompt", "consult", map[string]any{"proposal": promptCanary + " and delete everything"}},
		{"retry on another tool", "review", callArgs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, askDecision(true), time.Minute)
			cs := h.connect(t, "", func() answer { return nil }, true)
			first, err := cs.CallTool(t.Context(), &mcpParams{Name: "consult", Arguments: callArgs})
			if err != nil || first.RequestState == "" {
				t.Fatalf("first pass: %+v, %v", first, err)
			}
			res, err := cs.CallTool(t.Context(), &mcpParams{Name: tc.tool, Arguments: tc.args, RequestState: first.RequestState,
				InputResponses: mcpResponses{inputKey: (*mcpElicitResult)(ok)}})
			if err != nil {
				t.Fatal(err)
			}
			h.checkOutcome(t, resultText(res), "POLICY_DENIED consent.invalid_state", false)
		})
	}
	t.Run("same arguments in another key order", func(t *testing.T) {
		// A host may re-encode the arguments: the binding is their
		// meaning, not their bytes.
		h := newHarness(t, askDecision(true), time.Minute)
		cs := h.connect(t, "", func() answer { return nil }, true)
		args := map[string]any{"proposal": promptCanary, "workspace_path": "/w"}
		first, err := cs.CallTool(t.Context(), &mcpParams{Name: "consult", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(t.Context(), &mcpParams{Name: "consult", Arguments: json.RawMessage(`{ "workspace_path":"/w", "proposal":"` + promptCanary + `" }`),
			RequestState: first.RequestState, InputResponses: mcpResponses{inputKey: (*mcpElicitResult)(ok)}})
		if err != nil {
			t.Fatal(err)
		}
		h.checkOutcome(t, resultText(res), "ran remembered=false", false)
	})
	t.Run("replay", func(t *testing.T) {
		h := newHarness(t, askDecision(true), time.Minute)
		cs := h.connect(t, "", func() answer { return nil }, true)
		first, err := cs.CallTool(t.Context(), &mcpParams{Name: "consult", Arguments: callArgs})
		if err != nil {
			t.Fatal(err)
		}
		retry := &mcpParams{Name: "consult", Arguments: callArgs, RequestState: first.RequestState,
			InputResponses: mcpResponses{inputKey: (*mcpElicitResult)(ok)}}
		for i, want := range []string{"ran remembered=false", "POLICY_DENIED consent.invalid_state"} {
			res, err := cs.CallTool(t.Context(), retry)
			if err != nil {
				t.Fatal(err)
			}
			if got := resultText(res); got != want {
				t.Errorf("retry %d = %q, want %q", i, got, want)
			}
		}
		if h.starts.Load() != 1 {
			t.Errorf("starts = %d, want 1", h.starts.Load())
		}
	})
}

// TestAllowAndDenyNeverAsk: allow runs without elicitation; deny refuses
// without elicitation and records the rule.
func TestAllowAndDenyNeverAsk(t *testing.T) {
	for _, proto := range []string{"", "2025-06-18"} {
		h := newHarness(t, askDecisionWith(t, "allow"), time.Minute)
		cs := h.connect(t, proto, func() answer { t.Error("elicitation for an allowed model"); return nil }, false)
		got, err := call(t, cs)
		if err != nil || got != "ran remembered=false" {
			t.Errorf("allow: %q %v", got, err)
		}
		h = newHarness(t, askDecisionWith(t, "deny"), time.Minute)
		cs = h.connect(t, proto, func() answer { t.Error("elicitation for a denied model"); return nil }, false)
		got, _ = call(t, cs)
		h.checkOutcome(t, got, "POLICY_DENIED governance.deny", false)
		if evs := h.sink.Events(); len(evs) == 1 && evs[0].Rule != `governance.models.deny["gpt-x"]` {
			t.Errorf("deny event rule = %q", evs[0].Rule)
		}
	}
}

func askDecisionWith(t *testing.T, list string) (d policyDecision) {
	t.Helper()
	cfg := policyRulesConfig{}
	switch list {
	case "allow":
		cfg.Allow = []string{"gpt-x"}
	case "deny":
		cfg.Deny = []string{"gpt-x"}
	}
	r, err := policyNewRules(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return policyDecide(r, nil, policyInput{Backend: "codex", Requested: "gpt-x"})
}

func TestMessage(t *testing.T) {
	m := Message(askDecision(false))
	for _, want := range []string{"Backend: codex", "Model: gpt-x", "30.00 USD per million output tokens", "approximate",
		"exact match", "governance.askAbovePrice (20 USD)", "one turn"} {
		if !strings.Contains(m, want) {
			t.Errorf("message %q lacks %q", m, want)
		}
	}
	if strings.Contains(m, "remember") {
		t.Errorf("over-limit message offers remember: %q", m)
	}
	m = Message(askDecision(true))
	if !strings.Contains(m, "no price known") || !strings.Contains(m, "remember") {
		t.Errorf("unpriced message %q", m)
	}
	if _, ok := params(askDecision(false)).RequestedSchema.(map[string]any)["properties"].(map[string]any)["remember"]; ok {
		t.Error("form offers remember for an over-limit model")
	}
}
