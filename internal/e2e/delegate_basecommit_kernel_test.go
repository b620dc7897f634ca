package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/providertest"
)

// TestDelegateBaseCommitAgentReplaces (issue 16 red team, a base commit
// other than HEAD), through MCP and the real kernel's overlay: the real
// Claude Code's one command re-creates, over the seed's whiteout, a file
// HEAD has and the base lacks, exactly as HEAD has it; replaces a
// base-only file by an empty directory; and replaces a directory only the
// base has by a link out of the tree. Against the base that is the
// file's addition, the file's deletion, and the directory's file deleted
// plus the link (reported symlink.escapes). Before the fix the first two
// were missing from the patch and the third failed the job
// quarantine.read.
func TestDelegateBaseCommitAgentReplaces(t *testing.T) {
	cmd := `printf 'only in HEAD\n' > head.txt && rm old.txt && mkdir old.txt && rm -r d && ln -s /etc d`
	double := providertest.NewAnthropicTools(t, providertest.Options{Default: providertest.Reply{Text: "DONE"}},
		providertest.ToolUse{Name: "Bash", Input: map[string]any{"command": cmd, "description": "replace"}})
	probe := providertest.NewAnthropic(t, providertest.Options{})
	environ := delegateEnv(t, probe.URL(), double.URL(), "")
	ws := gitWorkspace(t)
	writeIn(t, ws, "old.txt", "only in the base\n")
	gitIn(t, ws, "add", "old.txt")
	gitIn(t, ws, "commit", "-q", "-m", "base")
	mkdirIn(t, ws, "d")
	writeIn(t, ws, "d/x.txt", "x\n")
	gitIn(t, ws, "add", "d")
	gitIn(t, ws, "commit", "-q", "-m", "base with d")
	gitIn(t, ws, "rm", "-rq", "old.txt", "d")
	writeIn(t, ws, "head.txt", "only in HEAD\n")
	gitIn(t, ws, "add", "head.txt")
	gitIn(t, ws, "commit", "-q", "-m", "head")
	before := dirHash(t, ws)
	var asked []string
	cs := connectElicit(t, environ, approving(&asked))
	sc, res := callDelegate(t, cs, map[string]any{"task": "Replace.", "workspace_path": ws, "model": delegateModel,
		"base": "HEAD~1", "wait": true, "budget": map[string]any{"max_usd": 3, "max_minutes": 5}})
	if res.IsError || sc["patch"] == nil {
		t.Fatalf("delegate base HEAD~1 = %v", sc)
	}
	patch := fmt.Sprint(sc["patch"])
	for _, want := range []string{"diff --git a/head.txt b/head.txt\nnew file mode 100644", "diff --git a/old.txt b/old.txt\ndeleted file mode 100644",
		"diff --git a/d/x.txt b/d/x.txt\ndeleted file mode 100644", "diff --git a/d b/d\nnew file mode 120000"} {
		if !strings.Contains(patch, want) {
			t.Errorf("patch lacks %q:\n%s", want, patch)
		}
	}
	if f := fmt.Sprint(sc["findings"]); !strings.Contains(f, "symlink.escapes") {
		t.Errorf("findings = %s, want the link out of the tree reported", f)
	}
	if dirHash(t, ws) != before {
		t.Error("the checkout changed")
	}
}

// mkdirIn makes dir/name (0755).
func mkdirIn(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
}
