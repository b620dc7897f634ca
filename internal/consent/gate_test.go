package consent

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/policy"
)

// promptCanary is tool-argument text that must never reach an event.
var promptCanary = "PROMPT-" + strings.Repeat("Q", 12)

// harness is a small MCP server whose consult tool calls Gate.Check and
// counts backend starts: the number the tests assert is zero on denials.
type harness struct {
	gate     *Gate
	sink     *event.Memory
	starts   atomic.Int32
	elicits  atomic.Int32
	decision policy.Decision
	clock    atomic.Int64 // unix seconds offset added to the real clock
	config   string
	last     atomic.Pointer[fault.Error] // the last refusal, message and details included
}

func newHarness(t *testing.T, d policy.Decision, timeout time.Duration) *harness {
	t.Helper()
	h := &harness{sink: &event.Memory{}, decision: d, config: filepath.Join(t.TempDir(), "config.json")}
	if err := os.WriteFile(h.config, []byte(`{"schemaVersion":1,"other":{"kept":true}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	g, err := New(Options{Sink: h.sink, Timeout: timeout, ConfigPath: h.config,
		Now: func() time.Time { return time.Now().Add(time.Duration(h.clock.Load()) * time.Second) }})
	if err != nil {
		t.Fatal(err)
	}
	h.gate = g
	return h
}

func (h *harness) handler(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	out, res, err := h.gate.Check(ctx, req, h.decision)
	if err != nil {
		fe := fault.From(err)
		h.last.Store(fe)
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(fe.Code) + " " + fe.Reason}}}, nil
	}
	if res != nil {
		return res, nil
	}
	h.starts.Add(1) // stands for session acquisition + the model turn
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("ran remembered=%v", out.Remembered)}}}, nil
}

// answer is a scripted elicitation reply; nil means "never answer".
type answer *mcp.ElicitResult

func accept(content map[string]any) answer {
	return &mcp.ElicitResult{Action: "accept", Content: content}
}

// connect starts the server and a client speaking protocol (""=latest).
// elicit == nil gives a client without the elicitation capability.
func (h *harness) connect(t *testing.T, protocol string, elicit func() answer, manual bool) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "coagent8-test", Version: "0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "consult", InputSchema: map[string]any{"type": "object"}}, h.handler)
	// A second governed tool: an answer given for one tool's call must
	// not approve another's (TestRetryState).
	srv.AddTool(&mcp.Tool{Name: "review", InputSchema: map[string]any{"type": "object"}}, h.handler)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	opts := &mcp.ClientOptions{}
	if manual {
		opts.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	}
	if elicit != nil {
		opts.ElicitationHandler = func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			h.elicits.Add(1)
			a := elicit()
			if a == nil {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return a, nil
		}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "0"}, opts).
		Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

var callArgs = map[string]any{"proposal": promptCanary}

// call runs the tool with the SDK's automatic flow; it returns the tool's
// text or the Go error.
func call(t *testing.T, cs *mcp.ClientSession) (string, error) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "consult", Arguments: callArgs})
	if err != nil {
		return "", err
	}
	return resultText(res), nil
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "")
}

// callManual plays a host that does not validate answers: it takes the
// input request and retries with the raw scripted answer.
func (h *harness) callManual(t *testing.T, cs *mcp.ClientSession, a answer, beforeRetry func()) string {
	t.Helper()
	ctx := context.Background()
	first, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "consult", Arguments: callArgs})
	if err != nil {
		t.Fatalf("first pass: %v", err)
	}
	if first.InputRequests == nil {
		return resultText(first)
	}
	ep, ok := first.InputRequests[inputKey].(*mcp.ElicitParams)
	if !ok || !first.NeedsInput() || len(first.Content) != 0 {
		t.Fatalf("first pass = %+v, want an input request and no content", first)
	}
	if !strings.Contains(ep.Message, h.decision.Model) {
		t.Errorf("form message %q does not name %s", ep.Message, h.decision.Model)
	}
	if h.starts.Load() != 0 {
		t.Fatal("the backend started before the answer")
	}
	if beforeRetry != nil {
		beforeRetry()
	}
	second, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "consult", Arguments: callArgs,
		InputResponses: mcp.InputResponseMap{inputKey: (*mcp.ElicitResult)(a)}, RequestState: first.RequestState})
	if err != nil {
		t.Fatalf("retry: %v", err)
	}
	return resultText(second)
}

func askDecision(remember bool) policy.Decision {
	d := policy.Decision{Effect: policy.Ask, Backend: "codex", Model: "gpt-x", Reason: policy.ReasonUnpriced, Remember: remember}
	if !remember {
		d.Reason, d.Rule = policy.ReasonAboveLimit, "governance.askAbovePrice"
		d.Price, d.PriceMatch, d.PriceID = big.NewRat(30, 1), policy.MatchExact, "openai/gpt-x"
		d.AskAbove, d.Multiplier = big.NewRat(20, 1), big.NewRat(2, 1)
	}
	return d
}

// checkOutcome asserts the result text, the start count, the events and
// the config file.
func (h *harness) checkOutcome(t *testing.T, got, want string, remembered bool) {
	t.Helper()
	if got != want {
		t.Errorf("result = %q, want %q", got, want)
	}
	denied := strings.HasPrefix(want, "POLICY_DENIED")
	if starts := h.starts.Load(); denied && starts != 0 || !denied && starts != 1 {
		t.Errorf("backend starts = %d (denied=%v)", starts, denied)
	}
	evs := h.sink.Events()
	if denied {
		reason := strings.TrimPrefix(want, "POLICY_DENIED ")
		if len(evs) != 1 || evs[0].Reason != reason || evs[0].Code != "POLICY_DENIED" || evs[0].Model != h.decision.Model ||
			evs[0].Backend != "codex" {
			t.Errorf("events = %+v, want exactly one POLICY_DENIED %s for gpt-x", evs, reason)
		}
	} else if len(evs) != 0 {
		t.Errorf("events on an approved turn: %+v", evs)
	}
	b, _ := json.Marshal(evs)
	if strings.Contains(string(b), promptCanary) {
		t.Errorf("an event carries prompt text: %s", b)
	}
	cfg, _ := os.ReadFile(h.config)
	if has := strings.Contains(string(cfg), `"gpt-x"`); has != remembered {
		t.Errorf("config lists gpt-x = %v, want %v:\n%s", has, remembered, cfg)
	}
	if !strings.Contains(string(cfg), `"kept"`) {
		t.Errorf("config lost an unknown key:\n%s", cfg)
	}
}
