package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/providertest"
)

// Input-request keys of the job question and the admission form
// (mcpserver ask.go); consult's is "coagent8.consent".
const (
	jobInputKey       = "coagent8.delegate_job"
	admissionInputKey = "coagent8.admission"
)

// connectInput connects under MCP 2026-07-28, whose hosts answer the job
// question and the admission form by input requests in the tool result.
// manual disables the SDK's automatic retry, so the test itself answers
// (and forges, replays, alters) the retried call; the elicitation
// handler of opts declares the capability and answers automatic retries.
func connectInput(t *testing.T, environ []string, opts *mcp.ClientOptions, manual bool) *mcp.ClientSession {
	t.Helper()
	if opts == nil {
		opts = &mcp.ClientOptions{}
	}
	if manual {
		opts.MultiRoundTrip = &mcp.MultiRoundTripOptions{Disabled: true}
	}
	cmd := exec.Command(binary)
	cmd.Env = environ
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// unusedHandler declares form elicitation for a manual client; the server
// must never send elicitation/create on 2026-07-28.
func unusedHandler(t *testing.T) *mcp.ClientOptions {
	return &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		t.Error("elicitation/create sent under MCP 2026-07-28")
		return &mcp.ElicitResult{Action: "decline"}, nil
	}}
}

// firstPass calls tool and wants the input-required result asking key:
// no content, a request state, and the form's message.
func firstPass(t *testing.T, cs *mcp.ClientSession, tool, key string, args map[string]any) (*mcp.ElicitParams, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s first pass: %v", tool, err)
	}
	p, _ := res.InputRequests[key].(*mcp.ElicitParams)
	if !res.NeedsInput() || p == nil || res.RequestState == "" || len(res.Content) != 0 || len(res.InputRequests) != 1 {
		t.Fatalf("%s first pass = %+v, want only an input request %s with a request state", tool, res, key)
	}
	return p, res.RequestState
}

// retry sends the retried call with responses and state.
func retry(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, responses mcp.InputResponseMap, state string) (map[string]any, *mcp.CallToolResult) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args, InputResponses: responses, RequestState: state})
	if err != nil {
		t.Fatalf("%s retry: %v", tool, err)
	}
	return structured(t, res), res
}

func answer(key string, r *mcp.ElicitResult) mcp.InputResponseMap {
	return mcp.InputResponseMap{key: r}
}

var approveTrue = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}

// TestDelegateInputRequestApproved (issue 16 scope 2 on MCP 2026-07-28):
// the job question goes out as an input request (not elicitation/create);
// the SDK host answers approve:true and retries; the job starts, runs the
// scripted edit and completes with its patch, asked exactly once.
func TestDelegateInputRequestApproved(t *testing.T) {
	file := "/job/workspace/main.txt"
	double := providertest.NewAnthropicTools(t, providertest.Options{Default: providertest.Reply{Text: "DELEGATE-DONE"}},
		providertest.ToolUse{Name: "Read", Input: map[string]any{"file_path": file}},
		providertest.ToolUse{Name: "Edit", Input: map[string]any{"file_path": file, "old_string": "old world", "new_string": "new world"}})
	probe := providertest.NewAnthropic(t, providertest.Options{})
	environ := delegateEnv(t, probe.URL(), double.URL(), "")
	ws := gitWorkspace(t)
	before := dirHash(t, ws)
	var asked []string
	cs := connectInput(t, environ, approving(&asked), false)
	sc, res := callDelegate(t, cs, map[string]any{"task": "Change old world to new world in main.txt.", "workspace_path": ws,
		"model": delegateModel, "wait": true, "budget": map[string]any{"max_usd": 3, "max_minutes": 5}})
	if res.IsError || sc["state"] != "succeeded" {
		t.Fatalf("delegate = %v", sc)
	}
	if len(asked) != 1 || !strings.Contains(asked[0], delegateModel) || !strings.Contains(asked[0], ws) {
		t.Fatalf("asked %q, want one job question naming the model and workspace", asked)
	}
	if p, _ := sc["patch"].(string); !strings.Contains(p, "-hello old world") || !strings.Contains(p, "+hello new world") {
		t.Errorf("patch = %q, want the scripted edit", sc["patch"])
	}
	if dirHash(t, ws) != before {
		t.Error("the checkout changed before admission")
	}
	// The first pass asked and refused nothing: no refusal event.
	if n := refusalEvents(t, cs, environ); n != 0 {
		t.Errorf("%d refusal events after an approved job, want 0", n)
	}
}

// refusalEvents closes cs (the server flushes its event log) and counts
// the refusal events in events.jsonl.
func refusalEvents(t *testing.T, cs *mcp.ClientSession, environ []string) int {
	t.Helper()
	cs.Close()
	b, _ := os.ReadFile(filepath.Join(homeOf(environ), ".coagent8", "events.jsonl"))
	return strings.Count(string(b), `"type":"refusal"`)
}

// TestDelegateInputRequestRefused (issue 16 scope 2 on MCP 2026-07-28):
// only approve === true in the retried call's inputResponses, bound to
// the original question, starts a job. Decline, cancel, approve "true"
// (a string), approve false, a retry with other arguments, a replayed, a
// forged or a missing request state, and an answer under another key are
// POLICY_DENIED with their reason; a 2026-07-28 client without
// elicitation is consent.unsupported_client. None starts a job or
// reaches the provider.
func TestDelegateInputRequestRefused(t *testing.T) {
	upstream := providertest.NewAnthropic(t, providertest.Options{})
	probe := providertest.NewAnthropic(t, providertest.Options{})
	environ := delegateEnv(t, probe.URL(), upstream.URL(), "")
	ws := gitWorkspace(t)
	cs := connectInput(t, environ, unusedHandler(t), true)
	args := map[string]any{"task": "edit main.txt", "workspace_path": ws, "model": delegateModel, "budget": map[string]any{"max_usd": 2}}
	other := map[string]any{"task": "delete everything", "workspace_path": ws, "model": delegateModel, "budget": map[string]any{"max_usd": 2}}
	more := map[string]any{"task": "edit main.txt", "workspace_path": ws, "model": delegateModel, "budget": map[string]any{"max_usd": 3}}
	p, spent := firstPass(t, cs, "delegate", jobInputKey, args)
	if !strings.Contains(p.Message, delegateModel) || p.Mode != "form" {
		t.Errorf("job question = %+v", p)
	}
	// spent is answered (declined) once; its replay below must not start.
	if sc, _ := retry(t, cs, "delegate", args, answer(jobInputKey, &mcp.ElicitResult{Action: "decline"}), spent); refusalOf(sc) != "POLICY_DENIED consent.declined" {
		t.Fatalf("decline = %v", sc)
	}
	for _, tc := range []struct {
		name      string
		args      map[string]any // the retried call's arguments (nil = the original)
		responses mcp.InputResponseMap
		state     string // "" = a fresh first pass's
		reason    string
	}{
		{"cancel", nil, answer(jobInputKey, &mcp.ElicitResult{Action: "cancel"}), "", "consent.cancelled"},
		{"approve string", nil, answer(jobInputKey, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": "true"}}), "", "consent.invalid_answer"},
		{"empty accept", nil, answer(jobInputKey, &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}), "", "consent.invalid_answer"},
		{"approve false", nil, answer(jobInputKey, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}), "", "consent.not_approved"},
		{"other task", other, answer(jobInputKey, approveTrue), "", "consent.invalid_state"},
		{"larger budget", more, answer(jobInputKey, approveTrue), "", "consent.invalid_state"},
		{"replayed state", nil, answer(jobInputKey, approveTrue), spent, "consent.invalid_state"},
		{"forged state", nil, answer(jobInputKey, approveTrue), "e30.AAAA", "consent.invalid_state"},
		{"no state", nil, answer(jobInputKey, approveTrue), "-", "consent.invalid_state"},
		{"consult's key", nil, answer("coagent8.consent", approveTrue), "", "consent.invalid_answer"},
		{"admission's key", nil, answer(admissionInputKey, approveTrue), "", "consent.invalid_answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := tc.state
			switch state {
			case "":
				_, state = firstPass(t, cs, "delegate", jobInputKey, args)
			case "-":
				state = ""
			}
			a := tc.args
			if a == nil {
				a = args
			}
			sc, res := retry(t, cs, "delegate", a, tc.responses, state)
			if got := refusalOf(sc); !res.IsError || got != "POLICY_DENIED "+tc.reason {
				t.Fatalf("retry = %v, want POLICY_DENIED %s", sc, tc.reason)
			}
		})
	}
	// A 2026-07-28 host without elicitation is refused before anything
	// is asked, as on earlier revisions.
	plain := connectInput(t, environ, nil, true)
	res, err := plain.CallTool(context.Background(), &mcp.CallToolParams{Name: "delegate", Arguments: args})
	if err != nil || !res.IsError || res.NeedsInput() || refusalOf(structured(t, res)) != "POLICY_DENIED consent.unsupported_client" {
		t.Errorf("no elicitation = %+v, %v", res, err)
	}
	noJobStarted(t, environ, upstream)
}

// TestRequestAdmissionInputRequest (issue 16 scope 5 on MCP 2026-07-28):
// the admission form goes out as an input request; decline, cancel,
// approve "true", approve false, job 1's state retried for job 2, a
// replayed or forged state and an answer under another key are
// POLICY_DENIED with their reason and leave both checkouts byte-identical
// and both jobs succeeded; the SDK host's approve:true then admits
// exactly job 1's patch.
func TestRequestAdmissionInputRequest(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{})
	environ := delegateEnv(t, dbl.URL(), dbl.URL(), "")
	state := filepath.Join(homeOf(environ), ".coagent8")
	ws, id := seedAdmissible(t, state, "done")
	ws2, id2 := seedAdmissible(t, state, "done too")
	before, before2 := dirHash(t, ws), dirHash(t, ws2)
	args := map[string]any{"job": id, "workspace_path": ws}
	args2 := map[string]any{"job": id2, "workspace_path": ws2}
	cs := connectInput(t, environ, unusedHandler(t), true)
	p, spent := firstPass(t, cs, "request_admission", admissionInputKey, args)
	for _, want := range []string{id, ws, "sha256:", "a.txt +1 -0", "Only approve: true admits"} {
		if !strings.Contains(p.Message, want) {
			t.Errorf("admission form lacks %q:\n%s", want, p.Message)
		}
	}
	if sc, _ := retry(t, cs, "request_admission", args, answer(admissionInputKey, &mcp.ElicitResult{Action: "decline"}), spent); refusalOf(sc) != "POLICY_DENIED consent.declined" {
		t.Fatalf("decline = %v", sc)
	}
	for _, tc := range []struct {
		name      string
		args      map[string]any
		responses mcp.InputResponseMap
		state     string
		reason    string
	}{
		{"cancel", nil, answer(admissionInputKey, &mcp.ElicitResult{Action: "cancel"}), "", "consent.cancelled"},
		{"approve string", nil, answer(admissionInputKey, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": "true"}}), "", "consent.invalid_answer"},
		{"approve false", nil, answer(admissionInputKey, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}), "", "consent.not_approved"},
		{"other job", args2, answer(admissionInputKey, approveTrue), "", "consent.invalid_state"},
		{"replayed state", nil, answer(admissionInputKey, approveTrue), spent, "consent.invalid_state"},
		{"forged state", nil, answer(admissionInputKey, approveTrue), "e30.AAAA", "consent.invalid_state"},
		{"job's key", nil, answer(jobInputKey, approveTrue), "", "consent.invalid_answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.state
			if st == "" {
				_, st = firstPass(t, cs, "request_admission", admissionInputKey, args)
			}
			a := tc.args
			if a == nil {
				a = args
			}
			sc, res := retry(t, cs, "request_admission", a, tc.responses, st)
			if got := refusalOf(sc); !res.IsError || got != "POLICY_DENIED "+tc.reason {
				t.Fatalf("retry = %v, want POLICY_DENIED %s", sc, tc.reason)
			}
			if dirHash(t, ws) != before || dirHash(t, ws2) != before2 || jobState(t, state, id) != job.Succeeded || jobState(t, state, id2) != job.Succeeded {
				t.Fatal("a checkout or a job changed")
			}
		})
	}
	var asked []string
	auto := connectInput(t, environ, approving(&asked), false)
	sc, res := call(t, auto, "request_admission", args)
	if res.IsError || sc["admitted"] != true || len(asked) != 1 {
		t.Fatalf("approved request_admission = %v (asked %d times)", sc, len(asked))
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "a\nscripted edit\n" {
		t.Errorf("a.txt after admission = %q", b)
	}
	if dirHash(t, ws2) != before2 || jobState(t, state, id2) != job.Succeeded {
		t.Error("job 2's checkout or state changed")
	}
	if n := len(dbl.Requests()); n != 0 {
		t.Errorf("%d provider requests", n)
	}
	// One event per refused retry (the decline and the 7 cases); the
	// first passes recorded none.
	auto.Close()
	if n := refusalEvents(t, cs, environ); n != 8 {
		t.Errorf("%d refusal events, want 8", n)
	}
}
