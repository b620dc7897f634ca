package quarantine

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/candidate"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gitrepo"
)

// seededRepo commits base (a.txt, keep.txt, gone.txt, dir/x.txt, link →
// a.txt, run.sh executable) and then HEAD over it (a.txt edited, gone.txt
// deleted, new.txt added, dir replaced by a file), and returns the
// repository, the base commit and HEAD.
func seededRepo(t *testing.T) (top, base, head string) {
	t.Helper()
	repo, base := newRepo(t, map[string]string{"a.txt": "a-old\n", "keep.txt": "k\n", "gone.txt": "only in base\n",
		"dir/x.txt": "x\n", "run.sh": "@x:echo hi\n"})
	top = repo.Top
	if err := os.Symlink("a.txt", filepath.Join(top, "link")); err != nil {
		t.Fatal(err)
	}
	gitRun(t, top, "add", "-A")
	gitRun(t, top, "commit", "-q", "-m", "base with link")
	base = gitRun(t, top, "rev-parse", "HEAD")
	writeFile(t, top, "a.txt", "a-new\n")
	writeFile(t, top, "new.txt", "only in HEAD\n")
	os.Remove(filepath.Join(top, "gone.txt"))
	os.RemoveAll(filepath.Join(top, "dir"))
	writeFile(t, top, "dir", "now a file\n")
	os.Remove(filepath.Join(top, "link"))
	gitRun(t, top, "add", "-A")
	gitRun(t, top, "commit", "-q", "-m", "head")
	return top, base, gitRun(t, top, "rev-parse", "HEAD")
}

// TestSeedBase (issue 16 scope 1, a base commit other than HEAD): the
// upper layer gets exactly the base's difference from the checkout — the
// base's content of a changed path, a whiteout for a path the base lacks,
// a directory where HEAD has a file — plus .git/HEAD detached at the base
// and an index of the base; with nothing done by the agent, no change is
// left; the agent's edits, a removal of a base-only file and an edit of an
// unchanged file become a patch against the base and nothing else.
func TestSeedBase(t *testing.T) {
	top, base, head := seededRepo(t)
	repo := openRepo(t, top)
	upper := filepath.Join(t.TempDir(), "upper")
	seed, err := SeedBase(context.Background(), repo, head, base, upper)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	filepath.WalkDir(upper, func(p string, d os.DirEntry, err error) error {
		rel, _ := filepath.Rel(upper, p)
		st, _ := os.Lstat(p)
		if rel != "." && rel != ".git" && !strings.HasPrefix(rel, ".git/") {
			got = append(got, rel+" "+st.Mode().Type().String())
		}
		return nil
	})
	want := []string{"a.txt ----------", "dir d---------", "dir/x.txt ----------", "gone.txt ----------",
		"link L---------", "new.txt Dc---------"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("upper layer (-want +got):\n%s", d)
	}
	if b, _ := os.ReadFile(filepath.Join(upper, ".git", "HEAD")); string(b) != base+"\n" {
		t.Errorf(".git/HEAD = %q, want the base detached", b)
	}
	ls := exec.Command("git", "ls-files", "-s")
	ls.Dir, ls.Env = top, append(os.Environ(), "GIT_INDEX_FILE="+filepath.Join(upper, ".git", "index"))
	out, err := ls.Output()
	if err != nil || !strings.Contains(string(out), "gone.txt") || strings.Contains(string(out), "new.txt") ||
		!strings.Contains(string(out), "100755") {
		t.Errorf("the seeded index is not the base's: %v\n%s", err, out)
	}

	ch, err := candidate.Changes(top, upper)
	if err != nil {
		t.Fatal(err)
	}
	if own, err := seed.Changes(upper, ch); err != nil || len(own) != 0 {
		t.Errorf("with nothing done, the agent's changes = %+v, %v; want none", own, err)
	}

	// The agent edits a.txt and the unchanged keep.txt (a copy-up) and
	// removes gone.txt, which only the layer has (no whiteout).
	writeFile(t, upper, "a.txt", "a-agent\n")
	writeFile(t, upper, "keep.txt", "k2\n")
	os.Remove(filepath.Join(upper, "gone.txt"))
	ch, err = candidate.Changes(top, upper)
	if err != nil {
		t.Fatal(err)
	}
	own, err := seed.Changes(upper, ch)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, c := range own {
		kinds = append(kinds, c.Kind.String()+" "+c.Path)
	}
	if d := cmp.Diff([]string{"modified a.txt", "deleted gone.txt", "modified keep.txt"}, kinds); d != "" {
		t.Errorf("the agent's changes (-want +got):\n%s", d)
	}
	c, err := Build(context.Background(), Input{Repo: repo, Base: base, Upper: upper, Changes: own})
	if err != nil {
		t.Fatal(err)
	}
	p := string(c.Patch)
	for _, want := range []string{"-a-old\n+a-agent", "deleted file mode 100644", "-only in base", "-k\n+k2"} {
		if !strings.Contains(p, want) {
			t.Errorf("patch lacks %q:\n%s", want, p)
		}
	}
	for _, bad := range []string{"new.txt", "dir", "link", "a-new"} {
		if strings.Contains(p, bad) {
			t.Errorf("patch has %q, which is HEAD's, not the agent's:\n%s", bad, p)
		}
	}
	if len(c.Findings) != 0 {
		t.Errorf("findings = %+v, want none", c.Findings)
	}
}

// TestSeedBaseRefusals: a base that differs from HEAD in a submodule is
// refused with its reason, by SeedBase and before that by CheckSeed.
func TestSeedBaseRefusals(t *testing.T) {
	top, base, _ := seededRepo(t)
	gitRun(t, top, "update-index", "--add", "--cacheinfo", "160000,"+base+",sub")
	gitRun(t, top, "commit", "-q", "-m", "submodule")
	head := gitRun(t, top, "rev-parse", "HEAD")
	_, err := SeedBase(context.Background(), openRepo(t, top), head, base, filepath.Join(t.TempDir(), "upper"))
	if got := reasonOf(err); got != ReasonSeedSubmodule {
		t.Errorf("seed over a submodule difference: %v (reason %q), want %s", err, got, ReasonSeedSubmodule)
	}
	// CheckSeed says so before anything starts.
	if got := reasonOf(CheckSeed(context.Background(), openRepo(t, top), head, base)); got != ReasonSeedSubmodule {
		t.Errorf("CheckSeed over a submodule difference: reason %q, want %s", got, ReasonSeedSubmodule)
	}
	if err := CheckSeed(context.Background(), openRepo(t, top), base, base); err != nil {
		t.Errorf("CheckSeed of no difference: %v", err)
	}
}

func openRepo(t *testing.T, top string) *gitrepo.Repo {
	t.Helper()
	r, err := gitrepo.Open(context.Background(), config.FromOS(), top)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func reasonOf(err error) string {
	if err == nil {
		return ""
	}
	return fault.From(err).Reason
}
