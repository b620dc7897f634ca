package quarantine

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/candidate"
)

// TestScanChangeLinkThroughLink: a target that steps back through a name
// ("b/..") is read lexically as the directory holding b, but the kernel
// resolves b first: with sub/b -> "..", the link a -> "sub/b/.." is the
// workspace's parent, outside it, though its lexical form stays inside.
// Such a target blocks; a target whose ".." steps only lead it (the
// common "../lib/x") is judged by its depth as before. Each case marked
// real is built on disk and resolved, to show where it lands.
func TestScanChangeLinkThroughLink(t *testing.T) {
	for _, tc := range []struct {
		links  [][2]string // path, target; the last is scanned
		escape bool
		real   bool // the chain is built on disk and must resolve as escape says
	}{
		{[][2]string{{"sub/b", ".."}, {"a", "sub/b/.."}}, true, true},
		{[][2]string{{"b", "."}, {"a", "b/b/b/.."}}, true, true},
		{[][2]string{{"b", "."}, {"up", "b/b/../x"}}, true, true},
		{[][2]string{{"x/l", "../y/../z"}}, true, false},
		{[][2]string{{"sub/ok", "../docs/x"}}, false, true},
		{[][2]string{{"a/b/c", "../../d"}}, false, true},
		{[][2]string{{"a/b/c", "../../../d"}}, true, true},
		{[][2]string{{"l", "./lib/./x"}}, false, true},
		{[][2]string{{"l", "lib//x/"}}, false, false},
	} {
		last := tc.links[len(tc.links)-1]
		t.Run(last[0]+"->"+last[1], func(t *testing.T) {
			got := false
			for _, f := range ScanChange(candidate.Change{Path: last[0], Kind: candidate.Added, Mode: fs.ModeSymlink | 0o777, Target: last[1]}) {
				got = got || f.Rule == RuleSymlinkEscape
			}
			if got != tc.escape {
				t.Errorf("symlink.escapes finding = %v, want %v", got, tc.escape)
			}
			if !tc.real {
				return
			}
			ws := filepath.Join(t.TempDir(), "ws")
			for _, d := range []string{"ws/docs/x", "ws/lib/x", "ws/d", "ws/x", "d", "x"} {
				os.MkdirAll(filepath.Join(filepath.Dir(ws), d), 0o755)
			}
			for _, l := range tc.links {
				full := filepath.Join(ws, l[0])
				os.MkdirAll(filepath.Dir(full), 0o755)
				if err := os.Symlink(l[1], full); err != nil {
					t.Fatal(err)
				}
			}
			res, err := filepath.EvalSymlinks(filepath.Join(ws, last[0]))
			if err != nil {
				t.Fatal(err)
			}
			if out := res != ws && !strings.HasPrefix(res, ws+"/"); out != tc.escape {
				t.Errorf("on disk %s resolves to %s (outside=%v), want outside=%v", last[0], res, out, tc.escape)
			}
		})
	}
}

// TestScanChangeGitmodules: a .gitmodules change is shown as a warning:
// admission writes no gitlink, but the file says where `git submodule
// update --init` fetches an existing submodule from and where it checks
// it out, code the review never shows.
func TestScanChangeGitmodules(t *testing.T) {
	for _, tc := range []struct {
		path string
		kind candidate.Kind
		want string
	}{
		{".gitmodules", candidate.Modified, RuleSubmodules},
		{".gitmodules", candidate.Added, RuleSubmodules},
		{".gitmodules", candidate.Deleted, RuleSubmodules},
		{"sub/.gitmodules", candidate.Added, ""}, // git reads the top-level file only
		{"gitmodules", candidate.Added, ""},
	} {
		got := ""
		for _, f := range ScanChange(candidate.Change{Path: tc.path, Kind: tc.kind, Mode: 0o644}) {
			if f.Severity != Warn {
				t.Errorf("%s: severity %s, want warn", tc.path, f.Severity)
			}
			got = f.Rule
		}
		if got != tc.want {
			t.Errorf("%s (%s): rule %q, want %q", tc.path, tc.kind, got, tc.want)
		}
	}
}

// TestScanChangeAgentConfig: coagent8's user runs a coding agent in this
// very checkout (the MCP host), unsandboxed. Its project files are code
// or instructions it loads from the directory: Claude Code's
// .claude/settings.json hooks run shell commands, .mcp.json and the
// other MCP configurations start servers, CLAUDE.md and AGENTS.md are
// instructions the host agent follows. A candidate writing one is shown
// as a warning, as .envrc and .vscode/tasks.json are.
func TestScanChangeAgentConfig(t *testing.T) {
	for _, tc := range []struct{ path, want string }{
		{".claude/settings.json", RuleAgentConfig},
		{".claude/settings.local.json", RuleAgentConfig},
		{".claude/commands/deploy.md", RuleAgentConfig},
		{".claude/agents/x.md", RuleAgentConfig},
		{".mcp.json", RuleAgentConfig},
		{".cursor/mcp.json", RuleAgentConfig},
		{".vscode/mcp.json", RuleAgentConfig},
		{".codex/config.toml", RuleAgentConfig},
		{".gemini/settings.json", RuleAgentConfig},
		{"CLAUDE.md", RuleAgentConfig},
		{"pkg/CLAUDE.md", RuleAgentConfig},
		{"CLAUDE.local.md", RuleAgentConfig},
		{"AGENTS.md", RuleAgentConfig},
		{"svc/AGENTS.md", RuleAgentConfig},
		{"GEMINI.md", RuleAgentConfig},
		{"docs/claude.md.txt", ""},
		{"README.md", ""},
	} {
		got := ""
		for _, f := range ScanChange(candidate.Change{Path: tc.path, Kind: candidate.Added, Mode: 0o644}) {
			if f.Severity != Warn {
				t.Errorf("%s: severity %s, want warn", tc.path, f.Severity)
			}
			got = f.Rule
		}
		if got != tc.want {
			t.Errorf("%s: rule %q, want %q", tc.path, got, tc.want)
		}
	}
}
