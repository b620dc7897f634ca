package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/providertest"
)

// TestDelegateBaseCommitAgentMatchesHead (issue 16 red team, a base
// commit other than HEAD): over MCP, the real Claude Code in the seeded
// candidate makes a file what HEAD has (its Edit turns HEAD~1's "alpha"
// into HEAD's "alpha (head)") and sets the executable bit HEAD has on
// run.sh. Both are changes against the base, so the patch carries both;
// before the fix the patch was empty, because the changed-file set is
// taken against the checkout (HEAD), where both paths equal it.
// Admission into HEAD then changes nothing (HEAD already has both).
func TestDelegateBaseCommitAgentMatchesHead(t *testing.T) {
	lines := "/job/workspace/lines.txt"
	double := providertest.NewAnthropicTools(t, providertest.Options{Default: providertest.Reply{Text: "DONE"}},
		providertest.ToolUse{Name: "Read", Input: map[string]any{"file_path": lines}},
		providertest.ToolUse{Name: "Edit", Input: map[string]any{"file_path": lines, "old_string": "alpha", "new_string": "alpha (head)"}},
		providertest.ToolUse{Name: "Bash", Input: map[string]any{"command": "chmod +x run.sh", "description": "mode"}})
	probe := providertest.NewAnthropic(t, providertest.Options{})
	environ := delegateEnv(t, probe.URL(), double.URL(), "")
	ws := gitWorkspace(t)
	writeIn(t, ws, "lines.txt", phonetic)
	writeIn(t, ws, "run.sh", "echo run\n")
	gitIn(t, ws, "add", "-A")
	gitIn(t, ws, "commit", "-q", "-m", "base")
	writeIn(t, ws, "lines.txt", strings.Replace(phonetic, "alpha", "alpha (head)", 1))
	if err := os.Chmod(filepath.Join(ws, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, ws, "commit", "-q", "-am", "head")
	var asked []string
	cs := connectElicit(t, environ, approving(&asked))
	sc, res := callDelegate(t, cs, map[string]any{"task": "Make alpha match HEAD.", "workspace_path": ws, "model": delegateModel,
		"base": "HEAD~1", "wait": true, "budget": map[string]any{"max_usd": 3, "max_minutes": 5}})
	if res.IsError || sc["state"] != "succeeded" {
		t.Fatalf("delegate base HEAD~1 = %v", sc)
	}
	patch := fmt.Sprint(sc["patch"])
	for _, want := range []string{"-alpha\n+alpha (head)", "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755"} {
		if !strings.Contains(patch, want) {
			t.Errorf("patch lacks %q:\n%s", want, patch)
		}
	}
	if out, err := admitJob(environ, ws, fmt.Sprint(sc["job"])); err != nil {
		t.Fatalf("admit into HEAD: %v\n%s", err, out)
	}
	if st := gitIn(t, ws, "status", "--porcelain"); st != "" {
		t.Errorf("git status after admit = %q, want clean (HEAD has both changes)", st)
	}
}

// TestDelegateBaseCommitConflict (issue 16 red team, a base commit other
// than HEAD): the real Claude Code edits, in HEAD~1's content, the line
// HEAD changed. The patch is against HEAD~1 (and so applies to it); its
// admission into HEAD is a three-way conflict, reported
// admission.conflict, and the checkout is byte-identical afterwards.
func TestDelegateBaseCommitConflict(t *testing.T) {
	lines := "/job/workspace/lines.txt"
	double := providertest.NewAnthropicTools(t, providertest.Options{Default: providertest.Reply{Text: "DONE"}},
		providertest.ToolUse{Name: "Read", Input: map[string]any{"file_path": lines}},
		providertest.ToolUse{Name: "Edit", Input: map[string]any{"file_path": lines, "old_string": "alpha", "new_string": "alpha (agent)"}})
	probe := providertest.NewAnthropic(t, providertest.Options{})
	environ := delegateEnv(t, probe.URL(), double.URL(), "")
	ws := gitWorkspace(t)
	writeIn(t, ws, "lines.txt", phonetic)
	gitIn(t, ws, "add", "-A")
	gitIn(t, ws, "commit", "-q", "-m", "base")
	writeIn(t, ws, "lines.txt", strings.Replace(phonetic, "alpha", "alpha (head)", 1))
	gitIn(t, ws, "commit", "-q", "-am", "head")
	var asked []string
	cs := connectElicit(t, environ, approving(&asked))
	sc, res := callDelegate(t, cs, map[string]any{"task": "Edit alpha.", "workspace_path": ws, "model": delegateModel,
		"base": "HEAD~1", "wait": true, "budget": map[string]any{"max_usd": 3, "max_minutes": 5}})
	if res.IsError || sc["state"] != "succeeded" {
		t.Fatalf("delegate base HEAD~1 = %v", sc)
	}
	if patch := fmt.Sprint(sc["patch"]); !strings.Contains(patch, "-alpha\n+alpha (agent)") {
		t.Errorf("patch is not against the base:\n%s", patch)
	}
	before := workHash(t, ws)
	out, err := admitJob(environ, ws, fmt.Sprint(sc["job"]))
	if err == nil || !strings.Contains(out, "admission.conflict") {
		t.Errorf("admit of a conflicting candidate: %v\n%s\nwant admission.conflict", err, out)
	}
	// Git freshens (touches) an object of the user's repository that a
	// scratch write finds there already, so .git/objects is compared by
	// names and bytes, not timestamps; everything else byte for byte and
	// timestamp.
	if workHash(t, ws) != before {
		t.Error("a refused admission changed the checkout")
	}
}

// workHash is dirHash whose .git/objects entries carry no timestamp.
func workHash(t *testing.T, dir string) string {
	t.Helper()
	return treeDigest(t, dir, filepath.Join(dir, ".git", "objects"))
}
