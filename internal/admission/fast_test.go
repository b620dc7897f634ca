package admission

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/candidate"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/gitrepo"
	"github.com/coagent8/coagent8/internal/quarantine"
)

// TestFastPathChoice: the one-process path is taken only when the
// checkout holds every preimage and no attributes file exists.
func TestFastPathChoice(t *testing.T) {
	ctx := context.Background()
	withAttrs := map[string]string{".gitattributes": "*.txt text\n"}
	for k, v := range baseFiles {
		withAttrs[k] = v
	}
	for _, tc := range []struct {
		name  string
		base  map[string]string
		edits []edit
		move  func(ws string)
		fast  bool
	}{
		{"clean", baseFiles, []edit{{path: "a.go", content: "package a\n"}, {path: "n.txt", content: "n\n"}, {path: "old.txt", del: true}}, nil, true},
		{"moved", baseFiles, []edit{{path: "a.go", content: strings.Replace(baseFiles["a.go"], "return 1", "return 100", 1)}}, func(ws string) {
			writeFile(t, ws, "a.go", strings.Replace(baseFiles["a.go"], "return 26", "return 2600", 1))
		}, false},
		{"added path exists", baseFiles, []edit{{path: "n.txt", content: "n\n"}}, func(ws string) { writeFile(t, ws, "n.txt", "mine\n") }, false},
		{"attributes", withAttrs, []edit{{path: "a.go", content: "package a\n"}}, nil, false},
		{"rename", baseFiles, []edit{{path: "keep2.txt", content: "keep\n"}, {path: "keep.txt", del: true}}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.base)
			c := f.candidate(tc.edits...)
			if tc.move != nil {
				tc.move(f.ws)
			}
			repo := openRepo(t, f.ws)
			s, _ := repo.Scratch("")
			defer s.Close()
			p, err := makePlan(ctx, repo, s, c.Patch)
			if tc.name == "added path exists" {
				if err == nil || p != nil {
					t.Fatalf("plan of an addition over an existing file: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.fast != nil; got != tc.fast {
				t.Errorf("fast path = %v, want %v", got, tc.fast)
			}
		})
	}
}

// TestFastPathKinds: on the fast path an executable, a symlink, a binary
// file, a deletion and an addition give exactly the candidate's tree.
func TestFastPathKinds(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, map[string]string{"run.sh": "echo 1\n", "bin.dat": "\x00\x01old", "gone.txt": "g\n", "d/x.txt": "x\n"})
	os.Chmod(filepath.Join(f.ws, "run.sh"), 0o755)
	os.Symlink("d/x.txt", filepath.Join(f.ws, "link"))
	gitRun(t, f.ws, "add", "-A")
	gitRun(t, f.ws, "commit", "-q", "-m", "modes")
	f.base = gitRun(t, f.ws, "rev-parse", "HEAD")
	up := t.TempDir()
	writeFile(t, up, "run.sh", "echo 2\n")
	os.Chmod(filepath.Join(up, "run.sh"), 0o755)
	writeFile(t, up, "bin.dat", "\x00\x02new")
	writeFile(t, up, "new/n.txt", "n\n")
	os.Symlink("run.sh", filepath.Join(up, "link"))
	changes := []candidate.Change{
		{Path: "bin.dat", Kind: candidate.Modified, Mode: 0o644, OldMode: 0o644},
		{Path: "gone.txt", Kind: candidate.Deleted, Mode: 0o644, OldMode: 0o644},
		{Path: "link", Kind: candidate.Modified, Mode: os.ModeSymlink | 0o777, OldMode: os.ModeSymlink | 0o777, Target: "run.sh"},
		{Path: "new/n.txt", Kind: candidate.Added, Mode: 0o644},
		{Path: "run.sh", Kind: candidate.Modified, Mode: 0o755, OldMode: 0o755},
	}
	repo, _ := gitrepo.Open(ctx, config.FromOS(), f.ws)
	c, err := quarantine.Build(ctx, quarantine.Input{Repo: repo, Base: f.base, Upper: up, Changes: changes})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := repo.Scratch("")
	p, err := makePlan(ctx, repo, s, c.Patch)
	s.Close()
	if err != nil || p.fast == nil {
		t.Fatalf("plan: fast %v, %v", p != nil && p.fast != nil, err)
	}
	j, _ := f.jobs.Create(ctx, jobSpec(f))
	f.jobs.Attach(ctx, j.ID, jobCandidate(c))
	if _, err := f.admit(j.ID); err != nil {
		t.Fatal(err)
	}
	if got := worktreeTree(t, f.ws); got != c.Tree {
		t.Errorf("tree %s, want %s", got, c.Tree)
	}
	if st, _ := os.Stat(filepath.Join(f.ws, "run.sh")); st.Mode()&0o100 == 0 {
		t.Error("run.sh lost its executable bit")
	}
	assertClean(t, f)
}
