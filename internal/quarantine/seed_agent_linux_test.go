package quarantine

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/coagent8/coagent8/internal/candidate"
	"github.com/coagent8/coagent8/internal/fault"
)

// seedAndRun seeds base over the checkout top (at head), lets agent edit
// the upper layer as the agent's writes through the overlay leave it,
// and returns the agent's changes against the base ([Seed.Changes]) and
// the candidate built from them.
func seedAndRun(t *testing.T, top, head, base string, agent func(upper string)) ([]string, *Candidate) {
	t.Helper()
	repo := openRepo(t, top)
	upper := filepath.Join(t.TempDir(), "upper")
	seed, err := SeedBase(context.Background(), repo, head, base, upper)
	if err != nil {
		t.Fatal(err)
	}
	agent(upper)
	ch, err := candidate.Changes(top, upper)
	if err != nil {
		t.Fatal(err)
	}
	own, err := seed.Changes(upper, ch)
	if err != nil {
		t.Fatalf("seed.Changes: %v", err)
	}
	var kinds []string
	for _, c := range own {
		kinds = append(kinds, c.Kind.String()+" "+c.Path)
	}
	c, err := Build(context.Background(), Input{Repo: repo, Base: base, Upper: upper, Changes: own})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return kinds, c
}

// recreate replaces the upper entry p (a whiteout the seed made) by a
// file, as overlayfs does when the agent creates a file over a whiteout.
func recreate(t *testing.T, upper, p, body string) {
	t.Helper()
	if err := os.Remove(filepath.Join(upper, p)); err != nil {
		t.Fatal(err)
	}
	writeFile(t, upper, p, body)
}

// TestSeedAgentMatchesHead (issue 16 red team): an agent change that
// makes a seeded path what the checkout (HEAD) has there is still a
// change against the base: candidate.Changes compares with the checkout
// and so does not list it, and the patch (relative to the base) must
// carry it. Each case once: an edit back to HEAD's content, a file the
// base lacks re-created as HEAD has it, an executable bit set as HEAD
// has it, a symbolic link retargeted to HEAD's target. Before the fix
// each was silently left out of the patch.
func TestSeedAgentMatchesHead(t *testing.T) {
	repo, _ := newRepo(t, map[string]string{"a.txt": "a-old\n", "m.sh": "echo m\n", "keep.txt": "k\n"})
	top := repo.Top
	if err := os.Symlink("t1", filepath.Join(top, "l")); err != nil {
		t.Fatal(err)
	}
	gitRun(t, top, "add", "-A")
	gitRun(t, top, "commit", "-q", "-m", "base")
	base := gitRun(t, top, "rev-parse", "HEAD")
	writeFile(t, top, "a.txt", "a-new\n")
	writeFile(t, top, "new.txt", "only in HEAD\n")
	os.Chmod(filepath.Join(top, "m.sh"), 0o755)
	os.Remove(filepath.Join(top, "l"))
	os.Symlink("t2", filepath.Join(top, "l"))
	gitRun(t, top, "add", "-A")
	gitRun(t, top, "commit", "-q", "-m", "head")
	head := gitRun(t, top, "rev-parse", "HEAD")

	kinds, c := seedAndRun(t, top, head, base, func(upper string) {
		writeFile(t, upper, "a.txt", "a-new\n")
		recreate(t, upper, "new.txt", "only in HEAD\n")
		if err := os.Chmod(filepath.Join(upper, "m.sh"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(upper, "l"))
		if err := os.Symlink("t2", filepath.Join(upper, "l")); err != nil {
			t.Fatal(err)
		}
	})
	if d := cmp.Diff([]string{"modified a.txt", "modified l", "modified m.sh", "added new.txt"}, kinds); d != "" {
		t.Errorf("the agent's changes against the base (-want +got):\n%s", d)
	}
	p := string(c.Patch)
	for _, want := range []string{"-a-old\n+a-new", "new file mode 100644", "+only in HEAD", "old mode 100644\nnew mode 100755", "-t1\n\\ No newline at end of file\n+t2"} {
		if !strings.Contains(p, want) {
			t.Errorf("patch lacks %q:\n%s", want, p)
		}
	}
}

// TestSeedAgentReplacesSeededEntry (issue 16 red team): the agent
// replaces what the seed wrote by another type. A base-only file
// replaced by an empty directory is the file's deletion (the directory
// alone was listed, so the deletion was lost); a directory the seed
// made (HEAD has a file there) replaced by a link out of the tree is the
// link plus the deletion of the directory's file (the layer lookup
// followed the link and the job failed PROCESS_ERROR quarantine.read
// naming dir/x.txt instead of reporting the link).
func TestSeedAgentReplacesSeededEntry(t *testing.T) {
	top, base, head := seededRepo(t)
	kinds, c := seedAndRun(t, top, head, base, func(upper string) {
		if err := os.Remove(filepath.Join(upper, "gone.txt")); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(upper, "gone.txt"), 0o755); err != nil {
			t.Fatal(err)
		}
		// rm -r dir over the checkout's file "dir" leaves a whiteout,
		// which the new link replaces.
		if err := os.RemoveAll(filepath.Join(upper, "dir")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/etc", filepath.Join(upper, "dir")); err != nil {
			t.Fatal(err)
		}
	})
	if d := cmp.Diff([]string{"added dir", "deleted dir/x.txt", "modified gone.txt"}, kinds); d != "" {
		t.Errorf("the agent's changes against the base (-want +got):\n%s", d)
	}
	p := string(c.Patch)
	for _, want := range []string{"diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644", "diff --git a/dir/x.txt b/dir/x.txt\ndeleted file mode 100644",
		"diff --git a/dir b/dir\nnew file mode 120000"} {
		if !strings.Contains(p, want) {
			t.Errorf("patch lacks %q:\n%s", want, p)
		}
	}
	var rules []string
	for _, f := range c.Findings {
		rules = append(rules, f.Rule+" "+f.Path)
	}
	if d := cmp.Diff([]string{RuleSymlinkEscape + " dir"}, rules); d != "" {
		t.Errorf("findings (-want +got):\n%s", d)
	}
}

// TestSeedCraftedTreeNeverWritesThroughLink (issue 16 red team): a base
// commit whose tree git mktree was made to hold a symbolic link "l" to a
// directory outside and a directory "l" with a file (a tree no checkout
// makes, which git accepts) is seeded without anything written through
// the link: the seed replaces its own link by the directory, and the
// writes go through os.Root, which refuses a path leaving the layer.
func TestSeedCraftedTreeNeverWritesThroughLink(t *testing.T) {
	repo, head := newRepo(t, map[string]string{"f": "f\n"})
	top, outside := repo.Top, t.TempDir()
	obj := func(body string) string {
		cmd := exec.Command("git", "hash-object", "-w", "--stdin")
		cmd.Dir, cmd.Stdin = top, strings.NewReader(body)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	mktree := func(entries string) string {
		cmd := exec.Command("git", "mktree")
		cmd.Dir, cmd.Stdin = top, strings.NewReader(entries)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	sub := mktree("100644 blob " + obj("written through the link\n") + "\tx\n")
	tree := mktree("100644 blob " + gitRun(t, top, "rev-parse", "HEAD:f") + "\tf\n120000 blob " + obj(outside) + "\tl\n040000 tree " + sub + "\tl\n")
	base := gitRun(t, top, "commit-tree", tree, "-p", head, "-m", "crafted")
	upper := filepath.Join(t.TempDir(), "upper")
	_, err := SeedBase(context.Background(), openRepo(t, top), head, base, upper)
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("the seed wrote through its link: %v in the outside directory (SeedBase: %v)", ents, err)
	}
	if err == nil {
		if st, lerr := os.Lstat(filepath.Join(upper, "l")); lerr != nil || !st.IsDir() {
			t.Errorf("upper/l = %v, %v; want the directory in place of the link", st, lerr)
		}
	}
}

// TestSeedTypeChains (issue 16 red team): bases whose paths change type
// against HEAD are seeded as the base has them and, with nothing done by
// the agent, leave no change: a directory of HEAD that the base has as a
// file (diff-tree lists the file before the directory's deletions), a
// file of HEAD below which the base has a deeper directory chain, and a
// link of HEAD that the base has as a directory.
func TestSeedTypeChains(t *testing.T) {
	for name, tc := range map[string]struct {
		head, base map[string]string // "@l:" a symbolic link to the rest
		want       map[string]string // upper entries: "file", "dir", "whiteout", "link"
	}{
		"dir to file": {head: map[string]string{"d/a": "a\n", "d/b/c": "c\n"}, base: map[string]string{"d": "now a file\n"},
			want: map[string]string{"d": "file"}},
		"file to deep dir": {head: map[string]string{"a": "file\n"}, base: map[string]string{"a/b/c/d": "deep\n"},
			want: map[string]string{"a": "dir", "a/b": "dir", "a/b/c": "dir", "a/b/c/d": "file"}},
		"link to dir": {head: map[string]string{"l": "@l:elsewhere", "elsewhere/x": "x\n"}, base: map[string]string{"l/y": "y\n", "elsewhere/x": "x\n"},
			want: map[string]string{"l": "dir", "l/y": "file"}},
	} {
		t.Run(name, func(t *testing.T) {
			repo, _ := newRepo(t, map[string]string{"keep": "k\n"})
			top := repo.Top
			commit := func(files map[string]string) string {
				gitRun(t, top, "rm", "-rq", "--cached", "--ignore-unmatch", ".")
				ents, _ := os.ReadDir(top)
				for _, e := range ents {
					if e.Name() != ".git" {
						os.RemoveAll(filepath.Join(top, e.Name()))
					}
				}
				for p, c := range files {
					if target, ok := strings.CutPrefix(c, "@l:"); ok {
						os.MkdirAll(filepath.Dir(filepath.Join(top, p)), 0o755)
						if err := os.Symlink(target, filepath.Join(top, p)); err != nil {
							t.Fatal(err)
						}
						continue
					}
					writeFile(t, top, p, c)
				}
				gitRun(t, top, "add", "-A")
				gitRun(t, top, "commit", "-q", "-m", name)
				return gitRun(t, top, "rev-parse", "HEAD")
			}
			base := commit(tc.base)
			head := commit(tc.head)
			upper := filepath.Join(t.TempDir(), "upper")
			seed, err := SeedBase(context.Background(), openRepo(t, top), head, base, upper)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			filepath.WalkDir(upper, func(p string, d os.DirEntry, err error) error {
				rel, _ := filepath.Rel(upper, p)
				if rel == "." || rel == ".git" || strings.HasPrefix(rel, ".git/") {
					return nil
				}
				st, _ := os.Lstat(p)
				switch m := st.Mode(); {
				case m.IsDir():
					got[rel] = "dir"
				case m.IsRegular():
					got[rel] = "file"
				case m&os.ModeSymlink != 0:
					got[rel] = "link"
				default:
					got[rel] = "whiteout"
				}
				return nil
			})
			for p, k := range tc.want {
				if got[p] != k {
					t.Errorf("upper %s = %q, want %q (all: %v)", p, got[p], k, got)
				}
			}
			ch, err := candidate.Changes(top, upper)
			if err != nil {
				t.Fatal(err)
			}
			if own, err := seed.Changes(upper, ch); err != nil || len(own) != 0 {
				t.Errorf("nothing done: the agent's changes = %+v, %v; want none", own, err)
			}
		})
	}
}

// TestSeedTooFar (issue 16 red team): a base commit whose difference from
// HEAD exceeds MaxSeedPaths paths or MaxSeedBytes bytes is refused
// INPUT_LIMIT delegate.base_too_far by CheckSeed (before the job starts)
// and by SeedBase, which then writes nothing. The trees are made with
// git mktree (one blob under many names), so the test stays small.
func TestSeedTooFar(t *testing.T) {
	repo, head := newRepo(t, map[string]string{"f": "f\n"})
	top := repo.Top
	run := func(stdin io.Reader, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Stdin = top, stdin
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	small := run(strings.NewReader("x\n"), "hash-object", "-w", "--stdin")
	// 130 MiB of zeros (zlib keeps the object small); twice is over 256 MiB.
	big := run(io.LimitReader(zeros{}, 130<<20), "hash-object", "-w", "--stdin")
	var many strings.Builder
	for i := range MaxSeedPaths + 1 {
		fmt.Fprintf(&many, "100644 blob %s\tp%06d\n", small, i)
	}
	for name, entries := range map[string]string{
		"paths": many.String(),
		"bytes": "100644 blob " + big + "\tbig1\n100644 blob " + big + "\tbig2\n",
	} {
		t.Run(name, func(t *testing.T) {
			base := run(nil, "commit-tree", run(strings.NewReader(entries), "mktree"), "-p", head, "-m", name)
			for what, err := range map[string]error{
				"CheckSeed": CheckSeed(context.Background(), openRepo(t, top), head, base),
				"SeedBase": func() error {
					upper := filepath.Join(t.TempDir(), "upper")
					_, err := SeedBase(context.Background(), openRepo(t, top), head, base, upper)
					if _, serr := os.Lstat(upper); serr == nil {
						t.Errorf("SeedBase over the limit made %s", upper)
					}
					return err
				}(),
			} {
				if fe := fault.From(err); err == nil || fe.Code != fault.InputLimit || fe.Reason != ReasonSeedTooLarge {
					t.Errorf("%s = %v, want INPUT_LIMIT %s", what, err, ReasonSeedTooLarge)
				}
			}
		})
	}
}

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestSeedHidesUntrackedBelowBaseFile (issue 16 red team): where the base
// has a file and the checkout an ignored directory (build output), the
// seeded file hides the directory as a checkout of the base would; its
// untracked files are not in the base, so they are no deletion of the
// agent's (they were listed as the agent's deletions, with nothing done).
func TestSeedHidesUntrackedBelowBaseFile(t *testing.T) {
	repo, _ := newRepo(t, map[string]string{"out": "base out\n", "keep": "k\n"})
	top := repo.Top
	base := gitRun(t, top, "rev-parse", "HEAD")
	gitRun(t, top, "rm", "-q", "out")
	writeFile(t, top, ".gitignore", "out/\n")
	gitRun(t, top, "add", ".gitignore")
	gitRun(t, top, "commit", "-q", "-m", "out is build output")
	head := gitRun(t, top, "rev-parse", "HEAD")
	writeFile(t, top, "out/junk.o", "junk\n")
	kinds, c := seedAndRun(t, top, head, base, func(string) {})
	if len(kinds) != 0 || len(c.Patch) != 0 || len(c.Findings) != 0 {
		t.Errorf("nothing done: changes %v, findings %+v, patch:\n%s", kinds, c.Findings, c.Patch)
	}
}

// TestSeedAgentGitDir (issue 16 red team): in a seeded candidate the
// agent's own repository state never reaches the patch and is one
// git.repository_state warning: .git/HEAD moved and the index rewritten,
// and .git replaced by a file pointing elsewhere; a nested sub/.git hook,
// an upper-case .GIT and a trailing-dot .git. still block.
func TestSeedAgentGitDir(t *testing.T) {
	for name, agent := range map[string]func(t *testing.T, upper string){
		"HEAD and index": func(t *testing.T, upper string) {
			writeFile(t, upper, ".git/HEAD", "ref: refs/heads/main\n")
			writeFile(t, upper, ".git/index", "DIRC garbage")
		},
		".git a file": func(t *testing.T, upper string) {
			if err := os.RemoveAll(filepath.Join(upper, ".git")); err != nil {
				t.Fatal(err)
			}
			writeFile(t, upper, ".git", "gitdir: /etc\n")
		},
		"nested and aliased": func(t *testing.T, upper string) {
			writeFile(t, upper, "sub/.git/hooks/post-checkout", "@x:#!/bin/sh\n")
			writeFile(t, upper, ".GIT/config", "[core]\n")
			writeFile(t, upper, ".git./x", "x\n")
		},
	} {
		t.Run(name, func(t *testing.T) {
			top, base, head := seededRepo(t)
			_, c := seedAndRun(t, top, head, base, func(upper string) { agent(t, upper) })
			var rules []string
			for _, f := range c.Findings {
				rules = append(rules, f.Severity.String()+" "+f.Rule+" "+f.Path)
			}
			want := []string{"warn " + RuleRepoState + " .git"}
			if name == "nested and aliased" {
				want = nil
				for _, p := range []string{".GIT", ".GIT/config", ".git.", ".git./x", "sub/.git", "sub/.git/hooks", "sub/.git/hooks/post-checkout"} {
					want = append(want, "block "+RuleGitDir+" "+p)
				}
			}
			if d := cmp.Diff(want, rules); d != "" {
				t.Errorf("findings (-want +got):\n%s", d)
			}
			if len(c.Patch) != 0 {
				t.Errorf("patch carries the git directory:\n%s", c.Patch)
			}
		})
	}
}

// TestSeedUnderSetgidParent (issue 16 red team): a new directory inherits
// its parent's setgid bit, so under a setgid candidate directory (TMPDIR
// on a group-shared file system) the seed's upper/ and .git/ carried it
// and the sandbox refused every seeded job (sandbox.candidate_seed: "has
// a setuid, setgid or sticky bit"). No entry the seed writes has one.
func TestSeedUnderSetgidParent(t *testing.T) {
	top, base, head := seededRepo(t)
	parent := t.TempDir()
	if err := os.Chmod(parent, 0o700|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	upper := filepath.Join(parent, "upper")
	if _, err := SeedBase(context.Background(), openRepo(t, top), head, base, upper); err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(upper, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			t.Fatal(err)
		}
		if st.Mode&(unix.S_ISUID|unix.S_ISGID|unix.S_ISVTX) != 0 {
			rel, _ := filepath.Rel(upper, p)
			t.Errorf("seeded %q has mode %o (a setuid, setgid or sticky bit)", rel, st.Mode)
		}
		return nil
	})
}

// TestSeedOrphanBase (issue 16 red team): a root commit unrelated to HEAD
// (an orphan branch) seeds every path of both trees; with nothing done
// there is no change, and an edit is a patch against the orphan only.
func TestSeedOrphanBase(t *testing.T) {
	top, _, head := seededRepo(t)
	blob := func(body string) string {
		cmd := exec.Command("git", "hash-object", "-w", "--stdin")
		cmd.Dir, cmd.Stdin = top, strings.NewReader(body)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	mk := exec.Command("git", "mktree")
	mk.Dir, mk.Stdin = top, strings.NewReader("100644 blob "+blob("orphan\n")+"\ta.txt\n100644 blob "+blob("o\n")+"\tonly-orphan.txt\n")
	tree, err := mk.Output()
	if err != nil {
		t.Fatal(err)
	}
	orphan := gitRun(t, top, "commit-tree", strings.TrimSpace(string(tree)), "-m", "orphan")
	kinds, c := seedAndRun(t, top, head, orphan, func(string) {})
	if len(kinds) != 0 || len(c.Patch) != 0 {
		t.Errorf("nothing done: changes %v, patch:\n%s", kinds, c.Patch)
	}
	kinds, c = seedAndRun(t, top, head, orphan, func(upper string) { writeFile(t, upper, "only-orphan.txt", "o2\n") })
	if d := cmp.Diff([]string{"modified only-orphan.txt"}, kinds); d != "" || !strings.Contains(string(c.Patch), "-o\n+o2") {
		t.Errorf("edit in the orphan: changes (-want +got):\n%s\npatch:\n%s", d, c.Patch)
	}
}
