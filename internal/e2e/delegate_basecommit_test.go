package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/providertest"
)

// TestDelegateBaseCommit (issue 16 scope 1, a base commit other than
// HEAD): over MCP, a job whose base is HEAD~1 gets the real Claude Code,
// in the candidate sandbox, a checkout of that commit: git inside reports
// it clean at that commit, a file HEAD deleted is there, HEAD's own edit
// and added file are not. The agent records what git and the file say,
// commits (its copy's .git: a warning, never in the patch) and edits a
// line. The patch is relative to HEAD~1 and holds the agent's changes
// only; the job is not tainted; the checkout was untouched until
// admission, which merges the patch into HEAD: the checkout ends with
// HEAD's and the agent's changes and nothing else.
func TestDelegateBaseCommit(t *testing.T) {
	lines := "/job/workspace/lines.txt"
	probeCmd := `git status --porcelain --untracked-files=no > seen.txt; git rev-parse HEAD >> seen.txt; cat old.txt >> seen.txt; ` +
		`test -e head.txt || echo no-head-file >> seen.txt; head -1 lines.txt >> seen.txt; ` +
		`git add seen.txt && git -c user.name=a -c user.email=a@example.invalid commit -qm wip && echo committed >> seen.txt`
	double := providertest.NewAnthropicTools(t, providertest.Options{Default: providertest.Reply{Text: "DONE"}},
		providertest.ToolUse{Name: "Bash", Input: map[string]any{"command": probeCmd, "description": "look"}},
		providertest.ToolUse{Name: "Read", Input: map[string]any{"file_path": lines}},
		providertest.ToolUse{Name: "Edit", Input: map[string]any{"file_path": lines, "old_string": "golf", "new_string": "golf (agent)"}})
	probe := providertest.NewAnthropic(t, providertest.Options{})
	environ := delegateEnv(t, probe.URL(), double.URL(), "")
	ws := gitWorkspace(t)
	write := func(name, body string) { t.Helper(); writeIn(t, ws, name, body) }
	write("lines.txt", phonetic)
	write("old.txt", "only in the base\n")
	gitIn(t, ws, "add", "-A")
	gitIn(t, ws, "commit", "-q", "-m", "base")
	base := strings.TrimSpace(gitIn(t, ws, "rev-parse", "HEAD"))
	write("lines.txt", strings.Replace(phonetic, "alpha", "alpha (head)", 1))
	write("head.txt", "only in HEAD\n")
	gitIn(t, ws, "rm", "-q", "old.txt")
	gitIn(t, ws, "add", "-A")
	gitIn(t, ws, "commit", "-q", "-m", "head")
	before := dirHash(t, ws)
	var asked []string
	cs := connectElicit(t, environ, approving(&asked))
	sc, res := callDelegate(t, cs, map[string]any{"task": "Edit golf.", "workspace_path": ws, "model": delegateModel,
		"base": "HEAD~1", "wait": true, "budget": map[string]any{"max_usd": 3, "max_minutes": 5}})
	if res.IsError || sc["state"] != "succeeded" {
		t.Fatalf("delegate base HEAD~1 = %v", sc)
	}
	if got := fmt.Sprint(sc["base"]); got != base {
		t.Errorf("job base = %q, want HEAD~1's commit %s", got, base)
	}
	patch := fmt.Sprint(sc["patch"])
	seen := "+" + base + "\n+only in the base\n+no-head-file\n+alpha\n+committed\n"
	for _, want := range []string{"-golf\n+golf (agent)", "b/seen.txt", seen} {
		if !strings.Contains(patch, want) {
			t.Errorf("patch lacks %q:\n%s", want, patch)
		}
	}
	for _, bad := range []string{"alpha (head)", "head.txt", "old.txt", ".git"} {
		if strings.Contains(patch, bad) {
			t.Errorf("patch has %q (HEAD's, or the agent's git directory):\n%s", bad, patch)
		}
	}
	if f := fmt.Sprint(sc["findings"]); !strings.Contains(f, "git.repository_state") || strings.Contains(f, "block") {
		t.Errorf("findings = %s, want only the repository-state warning", f)
	}
	if dirHash(t, ws) != before {
		t.Fatal("the checkout changed before admission")
	}
	if out, err := admitJob(environ, ws, fmt.Sprint(sc["job"])); err != nil {
		t.Fatalf("admit into HEAD: %v\n%s", err, out)
	}
	want := strings.NewReplacer("alpha", "alpha (head)", "golf", "golf (agent)").Replace(phonetic)
	if b, _ := os.ReadFile(filepath.Join(ws, "lines.txt")); string(b) != want {
		t.Errorf("lines.txt after admit = %q, want %q", b, want)
	}
	if st := gitIn(t, ws, "status", "--porcelain"); st != " M lines.txt\n?? seen.txt\n" {
		t.Errorf("git status after admit = %q, want the agent's edit and its new file only", st)
	}
}
