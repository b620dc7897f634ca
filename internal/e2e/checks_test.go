package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/providertest"
)

// goBin returns the canonical Go binary of this host (from `go env GOROOT`,
// symlinks resolved: the sandbox admits canonical paths only).

func goBin() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		panic("go env GOROOT: " + err.Error())
	}
	bin, err := filepath.EvalSymlinks(filepath.Join(strings.TrimSpace(string(out)), "bin", "go"))
	if err != nil {
		panic("go binary: " + err.Error())
	}
	return bin
}

// goRepo makes a Go module in Git whose uncommitted change does not
// compile (the model under review will not notice).
func goRepo(t *testing.T) (dir, sha string) {
	t.Helper()
	dir = t.TempDir()
	git, write := gitTools(t, dir)
	write("go.mod", "module example.com/calc\n\ngo 1.22\n")
	write("calc.go", "package calc\n\nfunc Div(a, b int) int {\n\treturn a * b\n}\n")
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "initial")
	write("calc.go", "package calc\n\nfunc Div(a, b int) int {\n\treturn a / c // REVIEWED_CHANGE\n}\n")
	return dir, git("rev-parse", "HEAD")
}

// checksEnv is env() with a verify section in the user's configuration.
func checksEnv(t *testing.T, baseURL, verify string) []string {
	t.Helper()
	environ := env(t, baseURL)
	writeConfig(t, filepath.Join(homeOf(environ), ".coagent8", "config.json"),
		`{"schemaVersion":1,"governance":{"models":{"allow":["claude-sonnet-5-5"]}},"verify":`+verify+`}`)
	return environ
}

// TestReviewChecksBlockReady: the real Claude CLI against the Anthropic
// double answers a clean READY envelope claiming typecheck=PASS, but the
// check the user configured ([[go build ./...]]) really exits 1 in the task
// sandbox: the server reports BLOCKED "Verification checks failed", warns
// against the model's claim, returns the check with its receipt, and
// records the run as a security event. run_checks:false leaves the
// model's READY standing.
func TestReviewChecksBlockReady(t *testing.T) {
	ws, sha := goRepo(t)
	answer := strings.Replace(envelope(sha, "READY", ""), "typecheck=NOT_RUN; tests=NOT_RUN", "typecheck=PASS; tests=PASS", 1)
	dbl := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: answer, Chunks: 3}})
	environ := checksEnv(t, dbl.URL(), `{"commands":[["`+goBin()+`","build","./..."]],"timeoutSeconds":300}`)
	cs := connect(t, environ)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "review", Arguments: map[string]any{
		"backend": "claude", "workspace_path": ws}})
	if err != nil {
		t.Fatalf("review: %v", err)
	}
	sc := structured(t, res)
	validateOutput(t, cs, "review", sc)
	checks, _ := sc["checks"].([]any)
	if len(checks) != 1 {
		t.Fatalf("checks = %v (warnings %v)", sc["checks"], sc["warnings"])
	}
	c := checks[0].(map[string]any)
	receipt, _ := c["receipt"].(map[string]any)
	got := map[string]any{"verdict": sc["verdict"], "reason": sc["reason"], "warnings": sc["warnings"],
		"command": c["command"], "status": c["status"], "exit": c["exit"], "exit_code": c["exit_code"], "tree_empty": receipt["tree_empty"]}
	want := map[string]any{"verdict": "BLOCKED", "reason": "Verification checks failed",
		"warnings": []any{"the model claimed typecheck=PASS but `go build ./...` exited 1"},
		"command":  []any{goBin(), "build", "./..."}, "status": "failed", "exit": "exited", "exit_code": 1.0, "tree_empty": true}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("review with a failing check (-want +got):\n%s", d)
	}
	if tail, _ := c["stderr_tail"].(string); !strings.Contains(tail, "undefined: c") {
		t.Errorf("stderr tail lacks the compiler error: %q", tail)
	}
	out, _ := sc["output"].(string)
	text := res.Content[0].(*mcp.TextContent).Text
	if strings.Contains(out, "VERDICT: READY") || !strings.Contains(text, "> - `go build ./...` exited 1") {
		t.Errorf("text does not show the real check:\n%s", text)
	}
	jobID, _ := receipt["job_id"].(string)
	if b, _ := os.ReadFile(filepath.Join(homeOf(environ), ".coagent8", "events.jsonl")); jobID == "" ||
		!strings.Contains(string(b), jobID) || !strings.Contains(string(b), "sandbox.run.exited") {
		t.Errorf("security events lack the run %q:\n%s", jobID, b)
	}
	if _, err := os.Stat(filepath.Join(ws, "calc.go")); err != nil {
		t.Fatal(err)
	}

	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "review", Arguments: map[string]any{
		"backend": "claude", "workspace_path": ws, "run_checks": false}})
	if err != nil {
		t.Fatal(err)
	}
	if sc := structured(t, res); sc["verdict"] != "READY" || sc["checks"] != nil {
		t.Errorf("run_checks:false: verdict %v, checks %v", sc["verdict"], sc["checks"])
	}
}

// TestReviewChecksMisconfigured: a malformed verify section does not stop
// the review; it runs without checks and says why.
func TestReviewChecksMisconfigured(t *testing.T) {
	ws, sha := goRepo(t)
	dbl := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: envelope(sha, "READY", ""), Chunks: 1}})
	cs := connect(t, checksEnv(t, dbl.URL(), `{"commands":"go build ./..."}`))
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "review", Arguments: map[string]any{
		"backend": "claude", "workspace_path": ws}})
	if err != nil {
		t.Fatal(err)
	}
	sc := structured(t, res)
	warnings, _ := sc["warnings"].([]any)
	if sc["verdict"] != "READY" || sc["checks"] != nil || len(warnings) != 1 ||
		!strings.Contains(warnings[0].(string), "configured checks were not run: verify.commands:") {
		t.Errorf("verdict %v, checks %v, warnings %v", sc["verdict"], sc["checks"], sc["warnings"])
	}
}

// TestReviewCannotInjectCommands: nothing a calling agent sends can add or
// choose a command: such arguments are invalid params and no model
// request is made.
func TestReviewCannotInjectCommands(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{})
	cs := connectVersion(t, checksEnv(t, dbl.URL(), `{"commands":[["`+goBin()+`","build","./..."]]}`), legacy) // -32602 before 2025-11-25
	for _, extra := range []map[string]any{
		{"commands": []any{[]any{"/usr/bin/sh", "-c", "id"}}}, {"verify": map[string]any{"commands": []any{[]any{"/usr/bin/id"}}}},
		{"run_checks": []any{"/usr/bin/id"}}, {"run_checks": "/usr/bin/id"},
	} {
		args := map[string]any{"backend": "claude", "workspace_path": t.TempDir()}
		for k, v := range extra {
			args[k] = v
		}
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "review", Arguments: args})
		var werr *jsonrpc.Error
		if err == nil || !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("extra %v: err = %v, want invalid params", extra, err)
		}
	}
	if n := len(dbl.Requests()); n != 0 {
		t.Fatalf("%d provider requests after rejected calls", n)
	}
}
