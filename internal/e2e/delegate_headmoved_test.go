package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/providertest"
)

// TestDelegateHeadMovesDuringQuestion (issue 16 red team, a base commit
// other than HEAD): the user works in the checkout while the job question
// is open. A tracked file edited meanwhile refuses the job when it starts
// (INVALID_INPUT delegate.workspace_dirty: the candidate sees the checkout
// as it is), before any job, sandbox or provider request. A commit made
// meanwhile moves the candidate's lower layer: the seed is the base's
// difference from the checkout's HEAD at the start, so the real Claude
// Code still sees exactly the base (other.txt as the base has it, git
// clean at the base), not the new commit's content under a seed computed
// from the old HEAD; the patch holds the agent's file only, and admission
// merges it into the moved HEAD.
func TestDelegateHeadMovesDuringQuestion(t *testing.T) {
	probeCmd := `cat other.txt main.txt > seen.txt; git status --porcelain --untracked-files=no >> seen.txt; git rev-parse HEAD >> seen.txt`
	double := providertest.NewAnthropicTools(t, providertest.Options{Default: providertest.Reply{Text: "DONE"}},
		providertest.ToolUse{Name: "Bash", Input: map[string]any{"command": probeCmd, "description": "look"}})
	probe := providertest.NewAnthropic(t, providertest.Options{})
	environ := delegateEnv(t, probe.URL(), double.URL(), "")
	ws := gitWorkspace(t)
	base := strings.TrimSpace(gitIn(t, ws, "rev-parse", "HEAD"))
	writeIn(t, ws, "main.txt", "hello head world\n")
	gitIn(t, ws, "commit", "-q", "-am", "head")

	var meanwhile func()
	cs := connectElicit(t, environ, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		meanwhile() // the user, while the question is open
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
	}})
	args := map[string]any{"task": "Look.", "workspace_path": ws, "model": delegateModel, "base": "HEAD~1", "wait": true,
		"budget": map[string]any{"max_usd": 3, "max_minutes": 5}}

	meanwhile = func() { writeIn(t, ws, "other.txt", "edited meanwhile\n") }
	sc, res := callDelegate(t, cs, args)
	if code, reason := delegateErr(sc); !res.IsError || code != "INVALID_INPUT" || reason != "delegate.workspace_dirty" {
		t.Fatalf("delegate over a checkout edited during the question = %v, want INVALID_INPUT delegate.workspace_dirty", sc)
	}
	noJobStarted(t, environ, double)
	gitIn(t, ws, "checkout", "-q", "--", "other.txt")

	meanwhile = func() {
		writeIn(t, ws, "other.txt", "committed meanwhile\n")
		gitIn(t, ws, "commit", "-q", "-am", "meanwhile")
	}
	sc, res = callDelegate(t, cs, args)
	if res.IsError || sc["state"] != "succeeded" {
		t.Fatalf("delegate base HEAD~1 with HEAD moved during the question = %v", sc)
	}
	if got := fmt.Sprint(sc["base"]); got != base {
		t.Errorf("job base = %q, want %s", got, base)
	}
	patch := fmt.Sprint(sc["patch"])
	seen := "+untouched\n+hello old world\n+" + base + "\n"
	if !strings.Contains(patch, seen) {
		t.Errorf("the agent did not see the base (want %q in the patch):\n%s", seen, patch)
	}
	if strings.Count(patch, "diff --git") != 1 {
		t.Errorf("patch has more than the agent's seen.txt:\n%s", patch)
	}
	if out, err := admitJob(environ, ws, fmt.Sprint(sc["job"])); err != nil {
		t.Fatalf("admit into the moved HEAD: %v\n%s", err, out)
	}
	if st := gitIn(t, ws, "status", "--porcelain"); st != "?? seen.txt\n" {
		t.Errorf("git status after admit = %q, want the agent's new file only", st)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "other.txt")); string(b) != "committed meanwhile\n" {
		t.Errorf("other.txt after admit = %q", b)
	}
}

// TestDelegateHeadBaseMovesDuringQuestion: the default base, HEAD, is the
// commit HEAD named when the user was asked; a commit made while the
// question was open does not move the candidate, which the real Claude
// Code sees at that commit (seeded against the new HEAD), and the job's
// base is that commit.
func TestDelegateHeadBaseMovesDuringQuestion(t *testing.T) {
	probeCmd := `cat other.txt > seen.txt; git status --porcelain --untracked-files=no >> seen.txt; git rev-parse HEAD >> seen.txt`
	double := providertest.NewAnthropicTools(t, providertest.Options{Default: providertest.Reply{Text: "DONE"}},
		providertest.ToolUse{Name: "Bash", Input: map[string]any{"command": probeCmd, "description": "look"}})
	probe := providertest.NewAnthropic(t, providertest.Options{})
	environ := delegateEnv(t, probe.URL(), double.URL(), "")
	ws := gitWorkspace(t)
	asked := strings.TrimSpace(gitIn(t, ws, "rev-parse", "HEAD"))
	cs := connectElicit(t, environ, &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		writeIn(t, ws, "other.txt", "committed meanwhile\n")
		gitIn(t, ws, "commit", "-q", "-am", "meanwhile")
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
	}})
	sc, res := callDelegate(t, cs, map[string]any{"task": "Look.", "workspace_path": ws, "model": delegateModel, "wait": true,
		"budget": map[string]any{"max_usd": 3, "max_minutes": 5}})
	if res.IsError || sc["state"] != "succeeded" {
		t.Fatalf("delegate with HEAD moved during the question = %v", sc)
	}
	if got := fmt.Sprint(sc["base"]); got != asked {
		t.Errorf("job base = %q, want the HEAD of the question %s", got, asked)
	}
	if patch, seen := fmt.Sprint(sc["patch"]), "+untouched\n+"+asked+"\n"; !strings.Contains(patch, seen) {
		t.Errorf("the agent did not see the HEAD of the question (want %q in the patch):\n%s", seen, patch)
	}
}
