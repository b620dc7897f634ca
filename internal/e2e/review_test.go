package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/providertest"
)

// gitTools returns a git runner (fixed identity, no system or user
// configuration) and a file writer for the repository in dir.
func gitTools(t *testing.T, dir string) (git func(args ...string) string, write func(name, body string)) {
	git = func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid",
			"-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	write = func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return git, write
}

// gitRepo makes a real repository with one commit and an uncommitted
// change (a modified file and an untracked one); it returns the
// directory and the commit sha.
func gitRepo(t *testing.T) (dir, sha string) {
	t.Helper()
	dir = t.TempDir()
	git, write := gitTools(t, dir)
	git("init", "-q")
	write("calc.go", "package calc\n\nfunc Div(a, b int) int {\n\treturn a * b\n}\n")
	git("add", "calc.go")
	git("commit", "-q", "-m", "initial")
	write("calc.go", "package calc\n\nfunc Div(a, b int) int {\n\treturn a / b // REVIEWED_CHANGE\n}\n")
	write("notes.txt", "UNTRACKED_NOTE\n")
	return dir, git("rev-parse", "HEAD")
}

func envelope(sha, verdict, findings string) string {
	return "I read the diff.\n\nREVIEW: 1\nSNAPSHOT: " + sha + "\nCOVERAGE: COMPLETE\nVERDICT: " + verdict +
		"\nSUMMARY: Division change reviewed.\n" + findings +
		"CHECKS: typecheck=NOT_RUN; tests=NOT_RUN\nEND_REVIEW"
}

const p2Finding = "[P2] calc.go:4 Division by zero is not handled\n" +
	"Problem: Div panics when b is 0.\n" +
	"Evidence: return a / b has no guard; a caller passing 0 crashes.\n" +
	"Fix: Return an error when b == 0.\n"

// TestReviewVerdictWithRealClaude drives review end to end: the built
// server, the pinned Claude Code CLI, the Anthropic double, a real Git
// repository with a change. The server, not the model, decides the verdict.
func TestReviewVerdictWithRealClaude(t *testing.T) {
	ws, sha := gitRepo(t)
	tests := []struct {
		name                    string
		answer                  string
		wantVerdict, wantReason string
		wantFindings            any
		wantInOutput            []string
		notInOutput             []string
	}{
		{name: "clean envelope", answer: envelope(sha, "READY", ""), wantVerdict: "READY",
			wantFindings: []any{}, wantInOutput: []string{"VERDICT: READY"}},
		{name: "one P2 finding under a READY claim", answer: envelope(sha, "READY", p2Finding), wantVerdict: "BLOCKED",
			wantReason: "Blocker issue [P1/P2] reported",
			wantFindings: []any{map[string]any{"severity": "P2", "title": "Division by zero is not handled", "file": "calc.go",
				"line": 4.0, "problem": "Div panics when b is 0.", "evidence": "return a / b has no guard; a caller passing 0 crashes.",
				"fix": "Return an error when b == 0."}},
			wantInOutput: []string{"VERDICT: BLOCKED", "[P2] calc.go:4"}, notInOutput: []string{"VERDICT: READY"}},
		{name: "truncated envelope", answer: strings.SplitAfter(envelope(sha, "READY", ""), "VERDICT: READY\n")[0],
			wantVerdict: "BLOCKED", wantReason: "Incomplete State Envelope", wantFindings: nil,
			wantInOutput: []string{"VERDICT: BLOCKED"}, notInOutput: []string{"VERDICT: READY"}},
		{name: "no envelope", answer: "The change looks fine to me.", wantVerdict: "BLOCKED",
			wantReason: "Incomplete State Envelope", wantFindings: nil,
			wantInOutput: []string{"The change looks fine to me.", "VERDICT: BLOCKED"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dbl := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: tt.answer, Chunks: 3}})
			cs := connect(t, env(t, dbl.URL()))
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "review", Arguments: map[string]any{
				"backend": "claude", "workspace_path": ws}})
			if err != nil {
				t.Fatalf("review: %v", err)
			}
			sc := structured(t, res)
			validateOutput(t, cs, "review", sc)
			if res.IsError || sc["status"] != "completed" {
				t.Fatalf("review failed: %v", sc)
			}
			rv, _ := sc["review"].(map[string]any)
			env, _ := rv["envelope"].(map[string]any)
			got := map[string]any{"verdict": sc["verdict"], "reason": sc["reason"], "review.verdict": rv["verdict"],
				"review.reason": rv["reason"], "findings": env["findings"]}
			want := map[string]any{"verdict": tt.wantVerdict, "reason": nilIfEmpty(tt.wantReason), "review.verdict": tt.wantVerdict,
				"review.reason": nilIfEmpty(tt.wantReason), "findings": tt.wantFindings}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("gated review (-want +got):\n%s", d)
			}
			out, _ := sc["output"].(string)
			for _, s := range tt.wantInOutput {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tt.notInOutput {
				if strings.Contains(out, s) {
					t.Errorf("output still contains %q:\n%s", s, out)
				}
			}
			if scope, _ := rv["scope"].(map[string]any); scope["commit"] != sha {
				t.Errorf("review.scope = %v, want commit %s", scope, sha)
			}
			assertReviewPrompt(t, dbl, sha)
		})
	}
}

// TestReviewExecutionErrorIsBlocked: a workspace that is no Git
// repository fails before any backend starts, as BLOCKED with the error's
// message as the reason.
func TestReviewExecutionErrorIsBlocked(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{})
	cs := connect(t, env(t, dbl.URL()))
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "review", Arguments: map[string]any{
		"backend": "claude", "workspace_path": t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	sc := structured(t, res)
	validateOutput(t, cs, "review", sc)
	e, _ := sc["error"].(map[string]any)
	if !res.IsError || sc["verdict"] != "BLOCKED" || e == nil || sc["reason"] != e["message"] || sc["reason"] == "" {
		t.Fatalf("structuredContent = %v", sc)
	}
	if n := len(dbl.Requests()); n != 0 {
		t.Fatalf("%d provider requests for a refused review", n)
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// assertReviewPrompt checks that the model request carried the review
// task, the snapshot commit, the tracked change and the untracked file.
func assertReviewPrompt(t *testing.T, dbl *providertest.Anthropic, sha string) {
	t.Helper()
	for _, r := range dbl.Requests() {
		body := string(r.Body)
		if strings.Contains(body, "CODE REVIEW") {
			for _, want := range []string{"REVIEWED_CHANGE", "UNTRACKED_NOTE", "SNAPSHOT: " + sha} {
				if !strings.Contains(body, want) {
					t.Errorf("review prompt lacks %q", want)
				}
			}
			return
		}
	}
	t.Error("no model request carried the review prompt")
}

// validateOutput checks structuredContent against the tool's advertised
// outputSchema, as a strict host would.
func validateOutput(t *testing.T, cs *mcp.ClientSession, tool string, sc map[string]any) {
	t.Helper()
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		if tl.Name != tool {
			continue
		}
		b, _ := json.Marshal(tl.OutputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s outputSchema: %v", tool, err)
		}
		if err := r.Validate(sc); err != nil {
			t.Fatalf("%s structuredContent does not meet its outputSchema: %v", tool, err)
		}
		return
	}
	t.Fatalf("tool %s not listed", tool)
}

// codexEnvelope is a structured answer meeting review.Schema(), as Codex
// returns it when outputSchema is enforced.
func codexEnvelope(sha string, findings ...map[string]any) string {
	if findings == nil {
		findings = []map[string]any{}
	}
	b, _ := json.Marshal(map[string]any{"review": "1", "snapshot": sha, "coverage": "COMPLETE", "verdict": "READY",
		"summary": "Division change reviewed.", "findings": findings,
		"checks": map[string]any{"typecheck": "NOT_RUN", "tests": "NOT_RUN"}, "next_steps": []string{}})
	return string(b)
}

// TestReviewVerdictWithRealCodex: the same four cases with the pinned
// Codex CLI (app-server) against the Responses double. Codex gets the
// envelope schema as outputSchema and answers in JSON; the server renders
// it to envelope text and gates it by the same rules.
func TestReviewVerdictWithRealCodex(t *testing.T) {
	ws, sha := gitRepo(t)
	p2 := map[string]any{"severity": "P2", "title": "Division by zero is not handled", "file": "calc.go", "line": 4,
		"line_end": nil, "problem": "Div panics when b is 0.", "evidence": "return a / b has no guard.",
		"fix": "Return an error when b == 0.", "confidence": 0.9}
	clean := codexEnvelope(sha)
	tests := []struct {
		name                    string
		answer                  string
		wantVerdict, wantReason string
		wantFindings            any
		wantInOutput            []string
	}{
		{"clean envelope", clean, "READY", "", []any{}, []string{"VERDICT: READY", "END_REVIEW"}},
		{"one P2 finding under a READY claim", codexEnvelope(sha, p2), "BLOCKED", "Blocker issue [P1/P2] reported",
			[]any{map[string]any{"severity": "P2", "title": "Division by zero is not handled", "file": "calc.go", "line": 4.0,
				"problem": "Div panics when b is 0.", "evidence": "return a / b has no guard.", "fix": "Return an error when b == 0.",
				"confidence": 0.9}},
			[]string{"VERDICT: BLOCKED", "[P2] calc.go:4 Division by zero is not handled"}},
		{"truncated envelope", clean[:len(clean)/2], "BLOCKED", "Incomplete State Envelope", nil, []string{"VERDICT: BLOCKED"}},
		{"no envelope", "The change looks fine to me.", "BLOCKED", "Incomplete State Envelope", nil,
			[]string{"The change looks fine to me.", "VERDICT: BLOCKED"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dbl := providertest.NewOpenAI(t, providertest.Options{Default: providertest.Reply{Text: tt.answer, Chunks: 3}})
			cs := connect(t, codexEnv(t, dbl))
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "review", Arguments: map[string]any{
				"backend": "codex", "workspace_path": ws}})
			if err != nil {
				t.Fatalf("review: %v", err)
			}
			sc := structured(t, res)
			validateOutput(t, cs, "review", sc)
			if res.IsError || sc["status"] != "completed" || sc["provider"] != "codex" {
				t.Fatalf("review failed: %v", sc)
			}
			rv, _ := sc["review"].(map[string]any)
			env, _ := rv["envelope"].(map[string]any)
			got := map[string]any{"verdict": sc["verdict"], "reason": sc["reason"], "review.verdict": rv["verdict"], "findings": env["findings"]}
			want := map[string]any{"verdict": tt.wantVerdict, "reason": nilIfEmpty(tt.wantReason), "review.verdict": tt.wantVerdict,
				"findings": tt.wantFindings}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("gated review (-want +got):\n%s", d)
			}
			out, _ := sc["output"].(string)
			for _, s := range tt.wantInOutput {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
			if strings.Contains(out, "VERDICT: READY") != (tt.wantVerdict == "READY") {
				t.Errorf("output verdict line disagrees with %s:\n%s", tt.wantVerdict, out)
			}
			assertCodexSchema(t, dbl)
		})
	}
}

// assertCodexSchema checks that the Responses request carried the review
// prompt and the envelope schema as structured output format.
func assertCodexSchema(t *testing.T, dbl *providertest.OpenAI) {
	t.Helper()
	for _, r := range dbl.Requests() {
		body := string(r.Body)
		if strings.HasSuffix(r.Path, "/responses") && strings.Contains(body, "CODE REVIEW") {
			for _, want := range []string{"REVIEWED_CHANGE", `"json_schema"`, `"next_steps"`} {
				if !strings.Contains(body, want) {
					t.Errorf("Responses request lacks %s", want)
				}
			}
			return
		}
	}
	t.Error("no Responses request carried the review prompt")
}
