package gitrepo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/config"
)

// plantVectors writes into ws's repository every configured program a
// content or porcelain git command could run, each creating a canary file
// named after itself in canaries (what an agent would write if its
// candidate's git directory reached the host). hooksPath puts the hooks
// in a core.hooksPath directory instead of .git/hooks.
func plantVectors(t *testing.T, ws, canaries string, hooksPath bool) {
	t.Helper()
	script := func(p, name, tail string) {
		body := "#!/bin/sh\n: > '" + filepath.Join(canaries, name) + "'\n" + tail
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	hooks := filepath.Join(ws, ".git", "hooks")
	if hooksPath {
		hooks = filepath.Join(ws, ".git", "elsewhere")
		git(t, ws, "config", "core.hooksPath", hooks)
	}
	os.MkdirAll(hooks, 0o755)
	for _, h := range []string{"pre-commit", "commit-msg", "post-commit", "post-checkout", "post-index-change", "reference-transaction"} {
		script(filepath.Join(hooks, h), "hook-"+h, "exit 0\n")
	}
	bin := filepath.Join(ws, ".git", "bin")
	os.Mkdir(bin, 0o755)
	for _, p := range []string{"fsmonitor", "clean", "smudge", "textconv", "merge", "ssh", "gpg"} {
		script(filepath.Join(bin, p), p, map[string]string{"clean": "exec cat\n", "smudge": "exec cat\n",
			"textconv": "exec cat \"$1\"\n", "merge": "exit 1\n"}[p]+"exit 1\n")
	}
	for _, kv := range [][2]string{{"core.fsmonitor", "fsmonitor"}, {"filter.x.clean", "clean"}, {"filter.x.smudge", "smudge"},
		{"diff.x.textconv", "textconv"}, {"merge.x.driver", "merge %O %A %B"}, {"core.sshCommand", "ssh"},
		{"gpg.program", "gpg"}} {
		git(t, ws, "config", kv[0], filepath.Join(bin, kv[1]))
	}
	git(t, ws, "config", "commit.gpgSign", "true")
	os.WriteFile(filepath.Join(ws, ".gitattributes"), []byte("* filter=x diff=x merge=x\n"), 0o644)
}

// hostOps are the git commands coagent8's quarantine and admission run
// over a workspace (through a Scratch: read-tree, update-index from the
// work tree, apply --3way, checkout-index, diff-tree) and porcelain a
// later call might run (status, commit, checkout, fetch over ssh).
func hostOps(ws, scratch, patch string) []struct {
	scratch bool
	stdin   string
	args    []string
} {
	type op = struct {
		scratch bool
		stdin   string
		args    []string
	}
	return []op{
		{true, "", []string{"read-tree", "HEAD"}},
		{true, "f\x00.gitattributes\x00", []string{"update-index", "--add", "--remove", "-z", "--stdin"}},
		{true, patch, []string{"apply", "--cached", "--3way", "--whitespace=nowarn", "-"}},
		{true, "", []string{"checkout-index", "-a", "-f", "--prefix=" + filepath.Join(scratch, "staging") + "/"}},
		{true, "", []string{"diff-index", "-p", "--cached", "HEAD"}},
		{false, "", []string{"status", "--porcelain"}},
		{false, "", []string{"diff", "HEAD"}},
		{false, "", []string{"commit", "-q", "-am", "m"}},
		{false, "", []string{"checkout", "-q", "-b", "other"}},
		{false, "", []string{"fetch", "ssh://127.0.0.1/x"}},
	}
}

// TestHostGitRunsNoRepositoryProgram: with a hook, core.hooksPath,
// core.fsmonitor, filter/diff/merge drivers named by .gitattributes,
// core.sshCommand and gpg.program all planted in the repository, no
// command coagent8's Repo runs starts any of them (no canary), while the
// same commands under plain git do (the control: the vectors are live).
func TestHostGitRunsNoRepositoryProgram(t *testing.T) {
	for _, hooksPath := range []bool{false, true} {
		t.Run(map[bool]string{false: "hooks", true: "hooksPath"}[hooksPath], func(t *testing.T) {
			got := canariesAfter(t, hooksPath, false)
			if d := cmp.Diff([]string(nil), got); d != "" {
				t.Errorf("programs run by coagent8's git (-want +got):\n%s", d)
			}
			control := canariesAfter(t, hooksPath, true)
			for _, want := range []string{"hook-pre-commit", "hook-post-checkout", "fsmonitor", "clean", "smudge", "merge"} {
				if !slices.Contains(control, want) {
					t.Errorf("control: plain git did not run %s (ran %v): the vector is not live", want, control)
				}
			}
		})
	}
}

// canariesAfter builds a repository with the vectors planted, runs
// hostOps (through Repo, or plain git when plain) and lists the canaries.
func canariesAfter(t *testing.T, hooksPath, plain bool) []string {
	ctx := context.Background()
	ws, canaries, scratchParent := t.TempDir(), t.TempDir(), t.TempDir()
	git(t, ws, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(ws, "f"), []byte("a\n"), 0o644)
	git(t, ws, "add", "f")
	git(t, ws, "commit", "-q", "-m", "b")
	blob, err := exec.Command("git", "-C", ws, "rev-parse", "HEAD:f").Output()
	if err != nil {
		t.Fatal(err)
	}
	// The full preimage id lets apply --3way merge (with the driver).
	patch := "diff --git a/f b/f\nindex " + strings.TrimSpace(string(blob)) + "..0000000000000000000000000000000000000000 100644\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+agent\n"
	plantVectors(t, ws, canaries, hooksPath)
	os.WriteFile(filepath.Join(ws, "f"), []byte("user\n"), 0o644) // the 3-way apply must merge
	r, err := Open(ctx, config.FromOS(), ws)
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Scratch(scratchParent)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ident := []string{"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid"}
	for _, op := range hostOps(ws, s.Dir, patch) {
		env := ident
		if op.scratch {
			env = append(append(slices.Clone(s.env), "GIT_WORK_TREE="+ws), ident...)
		}
		if plain {
			cmd := exec.Command("git", op.args...)
			cmd.Dir, cmd.Env, cmd.Stdin = ws, append(os.Environ(), env...), strings.NewReader(op.stdin)
			_ = cmd.Run() // failures are expected (conflicts, the refused fetch); the canaries tell
			continue
		}
		_, _ = r.Run(ctx, ws, env, []byte(op.stdin), op.args...)
	}
	ents, _ := os.ReadDir(canaries)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestRequiredFilterPassesRaw: a required filter (Git LFS marks its
// filter required) whose command is neutralized does not fail the
// command: the content passes raw (documented limit), not the filter.
func TestRequiredFilterPassesRaw(t *testing.T) {
	ctx := context.Background()
	ws, canaries := t.TempDir(), t.TempDir()
	git(t, ws, "init", "-q", "-b", "main")
	git(t, ws, "config", "filter.x.required", "true")
	git(t, ws, "config", "filter.x.clean", "touch "+filepath.Join(canaries, "clean")+"; cat")
	os.WriteFile(filepath.Join(ws, ".gitattributes"), []byte("* filter=x\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "f"), []byte("raw\n"), 0o644)
	r, err := Open(ctx, config.FromOS(), ws)
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Scratch(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Git(ctx, ws, []byte("f\x00"), "update-index", "--add", "-z", "--stdin"); err != nil {
		t.Fatalf("update-index under a required, neutralized filter: %v", err)
	}
	out, err := s.Git(ctx, "", nil, "cat-file", "blob", ":f")
	if got := string(out); err != nil || got != "raw\n" {
		t.Errorf("staged content %q (%v), want the raw bytes", got, err)
	}
	if ents, _ := os.ReadDir(canaries); len(ents) != 0 {
		t.Errorf("the filter ran")
	}
}

// TestNoDrivers: only content-free plumbing (and commands run outside the
// repository) skip the driver neutralization.
func TestNoDrivers(t *testing.T) {
	ceiling := []string{"GIT_CEILING_DIRECTORIES=/x"}
	for _, tc := range []struct {
		args  []string
		extra []string
		want  bool
	}{
		{[]string{"rev-parse", "--verify", "HEAD"}, nil, true},
		{[]string{"read-tree", "abc"}, nil, true},
		{[]string{"read-tree", "-u", "-m", "abc"}, nil, false},
		{[]string{"update-index", "-z", "--index-info"}, nil, true},
		{[]string{"update-index", "--add", "--remove", "-z", "--stdin"}, nil, false},
		{[]string{"update-index", "f"}, nil, false},
		{[]string{"diff-tree", "-p", "a", "b"}, nil, true},
		{[]string{"diff-tree", "--textconv", "a", "b"}, nil, false},
		{[]string{"cat-file", "--filters", "HEAD:f"}, nil, false},
		{[]string{"checkout-index", "-a"}, nil, false},
		{[]string{"apply", "--cached", "-"}, nil, false},
		{[]string{"apply", "-"}, ceiling, true},
		{[]string{"status"}, nil, false},
		{nil, nil, false},
	} {
		if got := noDrivers(tc.args, tc.extra); got != tc.want {
			t.Errorf("noDrivers(%q, %q) = %v, want %v", tc.args, tc.extra, got, tc.want)
		}
	}
}

// TestOutsideRunsNoGlobalFilter: the admission's fast path applies a patch
// in a staging directory outside any repository (GIT_CEILING_DIRECTORIES).
// There git still read the user's global config and core.attributesFile,
// and `git apply` ran the clean and smudge filters they select on the
// host; through Repo it runs neither (no canary, the patch applied), while
// plain git under the same HOME does (the control: the vector is live).
func TestOutsideRunsNoGlobalFilter(t *testing.T) {
	for _, plain := range []bool{false, true} {
		home, canaries, ws := t.TempDir(), t.TempDir(), t.TempDir()
		staging := filepath.Join(t.TempDir(), "staging")
		os.Mkdir(staging, 0o755)
		filter := filepath.Join(home, "filter")
		os.WriteFile(filter, []byte("#!/bin/sh\n: > '"+canaries+"'/\"$1\"\nexec cat\n"), 0o755)
		os.WriteFile(filepath.Join(home, "attrs"), []byte("* filter=x\n"), 0o644)
		os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[core]\n\tattributesFile = "+filepath.Join(home, "attrs")+
			"\n[filter \"x\"]\n\tclean = "+filter+" clean\n\tsmudge = "+filter+" smudge\n"), 0o644)
		git(t, ws, "init", "-q", "-b", "main")
		os.WriteFile(filepath.Join(staging, "f"), []byte("a\n"), 0o644)
		patch := "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+agent\n"
		env := config.FromList([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home})
		extra := []string{"GIT_CEILING_DIRECTORIES=" + filepath.Dir(staging)}
		if plain {
			cmd := exec.Command("git", "apply", "-")
			cmd.Dir, cmd.Stdin = staging, strings.NewReader(patch)
			cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1"}, extra...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("control apply: %v\n%s", err, out)
			}
		} else {
			r, err := Open(context.Background(), env, ws)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Run(context.Background(), staging, extra, []byte(patch), "apply", "--whitespace=nowarn", "-"); err != nil {
				t.Fatal(err)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(staging, "f")); string(b) != "agent\n" {
			t.Errorf("plain=%v: f = %q after apply", plain, b)
		}
		ents, _ := os.ReadDir(canaries)
		switch {
		case !plain && len(ents) != 0:
			t.Errorf("coagent8's apply outside the repository ran the global filter (%d canaries)", len(ents))
		case plain && len(ents) == 0:
			t.Error("control: plain git ran no filter: the vector is not live")
		}
	}
}
