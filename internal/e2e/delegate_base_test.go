package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/providertest"
)

// phonetic is lines.txt as committed: twelve distinct lines, so a hunk's
// context and a nearby edit can be told apart.
const phonetic = "alpha\nbravo\ncharlie\ndelta\necho\nfoxtrot\ngolf\nhotel\nindia\njuliet\nkilo\nlima\n"

// TestDelegateBaseUncommitted (issue 16 scope 1, base uncommitted): over
// MCP, a job whose base is the working tree as it is — a tracked file
// with an uncommitted edit and an untracked file — gets the real Claude
// Code, in the candidate sandbox, to edit both. The patch is relative to
// that state (the user's own edit is not in it; the untracked file is
// modified, not added). Admission then writes nothing when the checkout
// moved on the agent's line (conflict, byte-identical), and three-way
// merges a change next to the agent's hunk, whose preimage exists only in
// the job's base objects: the checkout ends with the user's and the
// agent's changes and nothing else.
func TestDelegateBaseUncommitted(t *testing.T) {
	lines, notes := "/job/workspace/lines.txt", "/job/workspace/notes.txt"
	double := providertest.NewAnthropicTools(t, providertest.Options{Default: providertest.Reply{Text: "DONE"}},
		providertest.ToolUse{Name: "Read", Input: map[string]any{"file_path": lines}},
		providertest.ToolUse{Name: "Edit", Input: map[string]any{"file_path": lines, "old_string": "golf", "new_string": "golf (agent)"}},
		providertest.ToolUse{Name: "Read", Input: map[string]any{"file_path": notes}},
		providertest.ToolUse{Name: "Edit", Input: map[string]any{"file_path": notes, "old_string": "untracked", "new_string": "untracked (agent)"}})
	probe := providertest.NewAnthropic(t, providertest.Options{})
	environ := delegateEnv(t, probe.URL(), double.URL(), "")
	ws := gitWorkspace(t)
	write := func(name, body string) { t.Helper(); writeIn(t, ws, name, body) }
	write("lines.txt", phonetic)
	gitIn(t, ws, "add", "lines.txt")
	gitIn(t, ws, "commit", "-q", "-m", "lines")
	dirty := strings.Replace(phonetic, "alpha", "alpha (dirty)", 1)
	write("lines.txt", dirty)
	write("notes.txt", "untracked\n")
	var asked []string
	cs := connectElicit(t, environ, approving(&asked))

	// HEAD over this checkout is refused, naming the way out.
	sc, res := callDelegate(t, cs, map[string]any{"task": "t", "workspace_path": ws, "model": delegateModel, "budget": map[string]any{"max_usd": 3}})
	if code, reason := delegateErr(sc); !res.IsError || code != "INVALID_INPUT" || reason != "delegate.workspace_dirty" || !strings.Contains(fmt.Sprint(sc), "uncommitted") {
		t.Fatalf("base HEAD over a dirty checkout = %v", sc)
	}
	sc, res = callDelegate(t, cs, map[string]any{"task": "Edit golf and the notes.", "workspace_path": ws, "model": delegateModel,
		"base": "uncommitted", "wait": true, "budget": map[string]any{"max_usd": 3, "max_minutes": 5}})
	if res.IsError || sc["state"] != "succeeded" {
		t.Fatalf("delegate base uncommitted = %v", sc)
	}
	id := fmt.Sprint(sc["job"])
	patch := fmt.Sprint(sc["patch"])
	for _, want := range []string{"-golf", "+golf (agent)", "-untracked", "+untracked (agent)"} {
		if !strings.Contains(patch, want) {
			t.Errorf("patch lacks %q:\n%s", want, patch)
		}
	}
	for _, bad := range []string{"alpha (dirty)", "new file mode", "main.txt"} {
		if strings.Contains(patch, bad) {
			t.Errorf("patch has %q (not relative to the working tree):\n%s", bad, patch)
		}
	}
	if b := fmt.Sprint(sc["base"]); !strings.HasPrefix(b, "uncommitted:") {
		t.Errorf("job base = %q, want uncommitted:<tree>", b)
	}

	// The checkout moved on the agent's own line: a conflict, nothing written.
	write("lines.txt", strings.Replace(dirty, "golf", "golf (user)", 1))
	before := dirHash(t, ws)
	if out, err := admitJob(environ, ws, id); err == nil || !strings.Contains(out, "admission.conflict") {
		t.Fatalf("admit over a conflicting change: %v\n%s", err, out)
	}
	if dirHash(t, ws) != before {
		t.Fatal("a refused admission changed the checkout")
	}

	// The checkout moved next to the agent's hunk (inside its context):
	// the plain apply fails, the three-way apply merges.
	write("lines.txt", strings.Replace(dirty, "delta", "delta (user)", 1))
	if out, err := admitJob(environ, ws, id); err != nil {
		t.Fatalf("admit over a non-conflicting change: %v\n%s", err, out)
	}
	want := strings.NewReplacer("alpha", "alpha (dirty)", "delta", "delta (user)", "golf", "golf (agent)").Replace(phonetic)
	for name, want := range map[string]string{"lines.txt": want, "notes.txt": "untracked (agent)\n", "main.txt": "hello old world\n"} {
		if b, _ := os.ReadFile(filepath.Join(ws, name)); string(b) != want {
			t.Errorf("%s after admit = %q, want %q", name, b, want)
		}
	}
	if st := gitIn(t, ws, "status", "--porcelain"); st != " M lines.txt\n?? notes.txt\n" {
		t.Errorf("git status after admit = %q", st)
	}
}

// writeIn writes body to dir/name (0644).
func writeIn(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func admitJob(environ []string, ws, id string) (string, error) {
	cmd := exec.Command(binary, "admit", id, "--workspace", ws)
	cmd.Env = environ
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// gitIn runs git in dir and returns its output.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}
