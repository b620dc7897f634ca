package quarantine

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"hash"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/candidate"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gitrepo"
)

// TestBuildGitProcesses: a Build runs four git processes (read-tree,
// update-index, write-tree, diff-tree; the base tree id comes from the
// scratch index, not a rev-parse), and its patch is what git's own
// diff-tree of the two trees gives. Before, Build ran five (issue 16:
// each git start is 20–60 ms of job overhead under load).
func TestBuildGitProcesses(t *testing.T) {
	repo, base := newRepo(t, map[string]string{"a.txt": "a\n", "d/b.txt": "b\n"})
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	bin, log := t.TempDir(), filepath.Join(t.TempDir(), "log")
	wrapper := "#!/bin/sh\necho \"$*\" >> '" + log + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	counted, err := gitrepo.Open(context.Background(), config.FromOS().With("PATH", bin), repo.Top)
	if err != nil {
		t.Fatal(err)
	}
	up := t.TempDir()
	writeFile(t, up, "d/b.txt", "b2\n")
	writeFile(t, up, "n.txt", "n\n")
	changes := []candidate.Change{change(candidate.Deleted, "a.txt", 0o644), change(candidate.Modified, "d/b.txt", 0o644), change(candidate.Added, "n.txt", 0o644)}
	c, err := Build(context.Background(), Input{Repo: counted, Base: base, Upper: up, Changes: changes})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(log)
	calls := strings.Split(strings.TrimSpace(string(b)), "\n")
	var verbs []string
	for _, l := range calls {
		for _, f := range strings.Fields(l) {
			if f == "read-tree" || f == "update-index" || f == "write-tree" || f == "diff-tree" || f == "rev-parse" || f == "config" {
				verbs = append(verbs, f)
				break
			}
		}
	}
	if got, want := strings.Join(verbs, " "), "read-tree update-index write-tree diff-tree"; got != want || len(calls) != 4 {
		t.Errorf("git processes = %q (%d), want %q (4)", got, len(calls), want)
	}
	if want := gitRun(t, repo.Top, "rev-parse", base+"^{tree}"); c.BaseTree != want {
		t.Errorf("BaseTree = %s, want %s", c.BaseTree, want)
	}
	if !strings.Contains(string(c.Patch), "deleted file mode 100644") || !strings.Contains(string(c.Patch), "+b2") {
		t.Errorf("patch:\n%s", c.Patch)
	}
}

// TestBaseFromIndex reads the root tree back from indexes git wrote with
// read-tree (versions 2, 3 with extended flags, 4; SHA-1 and SHA-256)
// and refuses what it cannot be sure of, so that Build asks rev-parse.
func TestBaseFromIndex(t *testing.T) {
	type tc struct {
		name, format string
		version      string
		mangle       func(t *testing.T, repo, index string)
		wantOK       bool
	}
	for _, c := range []tc{
		{name: "v2 sha1", format: "sha1", version: "2", wantOK: true},
		{name: "v3 extended flags sha1", format: "sha1", version: "3", wantOK: true, mangle: func(t *testing.T, repo, index string) {
			// skip-worktree is an extended flag (version 3, two more
			// bytes in the entry); write-tree re-primes the root.
			gitIdx(t, repo, index, "update-index", "--skip-worktree", "dir/c.txt")
			gitIdx(t, repo, index, "write-tree")
			if b, _ := os.ReadFile(index); b[7] != 3 {
				t.Fatalf("index version %d, want 3", b[7])
			}
		}},
		{name: "intent-to-add: root not recorded", format: "sha1", version: "3", mangle: func(t *testing.T, repo, index string) {
			writeFile(t, repo, "x.txt", "x\n")
			gitIdx(t, repo, index, "add", "-N", "x.txt")
			gitIdx(t, repo, index, "write-tree")
		}},
		{name: "v4 sha1", format: "sha1", version: "4", wantOK: true},
		{name: "v2 sha256", format: "sha256", version: "2", wantOK: true},
		{name: "v4 sha256", format: "sha256", version: "4", wantOK: true},
		{name: "root invalidated", format: "sha1", version: "2", mangle: func(t *testing.T, repo, index string) {
			gitIdx(t, repo, index, "update-index", "--force-remove", "dir/c.txt")
		}},
		{name: "bad checksum", format: "sha1", version: "2", mangle: func(t *testing.T, repo, index string) {
			b, _ := os.ReadFile(index)
			b[len(b)-1] ^= 1
			os.WriteFile(index, b, 0o600)
		}},
		{name: "truncated", format: "sha1", version: "2", mangle: func(t *testing.T, repo, index string) {
			b, _ := os.ReadFile(index)
			os.WriteFile(index, b[:20], 0o600)
		}},
		{name: "missing", format: "sha1", version: "2", mangle: func(t *testing.T, repo, index string) { os.Remove(index) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			repo := t.TempDir()
			gitRun(t, repo, "init", "-q", "--object-format="+c.format)
			writeFile(t, repo, "a.txt", "a\n")
			writeFile(t, repo, "dir/c.txt", "c\n")
			writeFile(t, repo, "dir/sub/"+strings.Repeat("long-name-", 6)+".txt", "l\n")
			gitRun(t, repo, "add", "-A")
			gitRun(t, repo, "commit", "-q", "-m", "base")
			want := gitRun(t, repo, "rev-parse", "HEAD^{tree}")
			index := filepath.Join(t.TempDir(), "index")
			t.Setenv("GIT_INDEX_VERSION", c.version)
			gitIdx(t, repo, index, "read-tree", want)
			if c.mangle != nil {
				c.mangle(t, repo, index)
			}
			got, newHash, ok := baseFromIndex(index)
			if ok != c.wantOK || ok && got != want {
				t.Fatalf("baseFromIndex = %q, %v; want %q, %v", got, ok, want, c.wantOK)
			}
			if ok {
				wantSize := sha1.Size
				if c.format == "sha256" {
					wantSize = sha256.Size
				}
				if newHash().Size() != wantSize {
					t.Errorf("hash size %d, want %d", newHash().Size(), wantSize)
				}
			}
		})
	}
}

// gitIdx runs git in repo over the index file index (stdin: "x\n").
func gitIdx(t *testing.T, repo, index string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Stdin = repo, strings.NewReader("x\n")
	cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+index, "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// TestBuildBadBase: a base read-tree cannot load is still INVALID_INPUT
// quarantine.base (rev-parse names the cause on that path), whatever it
// looks like; nothing is read from the upper directory.
func TestBuildBadBase(t *testing.T) {
	repo, base := newRepo(t, map[string]string{"a.txt": "a\n"})
	blob := gitRun(t, repo.Top, "rev-parse", base+":a.txt")
	for _, bad := range []string{"nope", "--output=x", blob, base + "~1", strings.Repeat("0", 40)} {
		t.Run(bad, func(t *testing.T) {
			_, err := Build(context.Background(), Input{Repo: repo, Base: bad, Upper: filepath.Join(t.TempDir(), "absent")})
			if f := fault.From(err); f == nil || f.Code != fault.InvalidInput || f.Reason != ReasonBase {
				t.Errorf("Build(base %q) = %v, want INVALID_INPUT %s", bad, err, ReasonBase)
			}
		})
	}
}

// BenchmarkBuild times Build of a 10-file patch (issue 16's job overhead
// case) with the base tree read from the scratch index ("index", four git
// processes) against the rev-parse path it replaced ("rev-parse", five), in
// one run:
//
//	go test -run '^$' -bench Build -benchtime 20x ./internal/quarantine
func BenchmarkBuild(b *testing.B) {
	files := map[string]string{}
	for i := range 50 {
		files["pkg/f"+strconv.Itoa(i)+".go"] = "package pkg\n"
	}
	repo, base := newRepo(b, files)
	up := b.TempDir()
	var changes []candidate.Change
	for i := range 10 {
		p := "new/n" + strconv.Itoa(i) + ".go"
		writeFile(b, up, p, "package n\n\nconst N = "+strconv.Itoa(i)+"\n")
		changes = append(changes, change(candidate.Added, p, 0o644))
	}
	run := func(b *testing.B) {
		for b.Loop() {
			if _, err := Build(context.Background(), Input{Repo: repo, Base: base, Upper: up, Changes: changes}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("rev-parse", func(b *testing.B) {
		indexBase = func(string) (string, func() hash.Hash, bool) { return "", nil, false }
		defer func() { indexBase = baseFromIndex }()
		run(b)
	})
	b.Run("index", run)
}
