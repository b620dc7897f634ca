package admission

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/candidate"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/gitrepo"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/quarantine"
	"github.com/coagent8/coagent8/internal/store"
)

func gitRun(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeFile(t testing.TB, root, p, c string) {
	t.Helper()
	full := filepath.Join(root, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fixture is a real repository, a real state database and an admitter.
type fixture struct {
	t      testing.TB
	ws     string
	base   string
	state  string
	db     *store.DB
	jobs   *job.Store
	adm    *Admitter
	events *event.Memory
}

func newFixture(t testing.TB, files map[string]string) *fixture {
	t.Helper()
	f := &fixture{t: t, ws: t.TempDir(), state: t.TempDir(), events: &event.Memory{}}
	gitRun(t, f.ws, "init", "-q", "-b", "main")
	for p, c := range files {
		writeFile(t, f.ws, p, c)
	}
	gitRun(t, f.ws, "add", "-A")
	gitRun(t, f.ws, "commit", "-q", "-m", "base")
	f.base = gitRun(t, f.ws, "rev-parse", "HEAD")
	f.open()
	t.Cleanup(func() { f.db.Close() })
	return f
}

// open (re)opens the database, the job store and the admitter, as a
// restarted coagent8 does.
func (f *fixture) open() {
	f.t.Helper()
	if f.db != nil {
		f.db.Close()
	}
	var err error
	if f.db, err = store.Open(context.Background(), filepath.Join(f.state, "state.db"), 0); err != nil {
		f.t.Fatal(err)
	}
	if f.jobs, err = job.Open(context.Background(), f.db); err != nil {
		f.t.Fatal(err)
	}
	if f.adm, err = New(context.Background(), Options{Jobs: f.jobs, Env: config.FromOS(), StateDir: f.state, Events: f.events}); err != nil {
		f.t.Fatal(err)
	}
}

// edit is one file of a candidate: content, or delete.
type edit struct {
	path, content string
	del           bool
}

// job creates a job at base whose candidate makes edits, built by
// quarantine.Build from an upper directory, and returns its id.
func (f *fixture) job(edits ...edit) string {
	f.t.Helper()
	ctx := context.Background()
	j, err := f.jobs.Create(ctx, job.Spec{Workspace: f.ws, Base: f.base, Backend: "claude", Model: "m"})
	if err != nil {
		f.t.Fatal(err)
	}
	c := f.candidate(edits...)
	if _, err := f.jobs.Attach(ctx, j.ID, job.Candidate{Patch: c.Patch, Digest: c.Digest, Findings: c.Findings}); err != nil {
		f.t.Fatal(err)
	}
	return j.ID
}

func (f *fixture) candidate(edits ...edit) *quarantine.Candidate {
	f.t.Helper()
	up := f.t.TempDir()
	var changes []candidate.Change
	for _, e := range edits {
		c := candidate.Change{Path: e.path, Kind: candidate.Added, Mode: 0o644}
		if fi, err := os.Lstat(filepath.Join(f.ws, e.path)); err == nil && !fi.IsDir() {
			c.Kind, c.OldMode = candidate.Modified, 0o644
		}
		if e.del {
			c.Kind = candidate.Deleted
		} else {
			writeFile(f.t, up, e.path, e.content)
		}
		changes = append(changes, c)
	}
	sort.Slice(changes, func(i, k int) bool { return changes[i].Path < changes[k].Path })
	repo, err := gitrepo.Open(context.Background(), config.FromOS(), f.ws)
	if err != nil {
		f.t.Fatal(err)
	}
	c, err := quarantine.Build(context.Background(), quarantine.Input{Repo: repo, Base: f.base, Upper: up, Changes: changes})
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

func (f *fixture) admit(id string, ack ...string) (Result, error) {
	return f.adm.Admit(context.Background(), Request{Job: id, Workspace: f.ws, Actor: "test", Ack: ack})
}

// snapshot returns every file of the work tree and git directory (path →
// mode and content), so "byte-identical" covers .git too.
func snapshot(t testing.TB, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		info, _ := d.Info()
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			tgt, _ := os.Readlink(p)
			m[rel] = "link:" + tgt
		case d.IsDir():
			m[rel] = "dir"
		default:
			b, _ := os.ReadFile(p)
			m[rel] = info.Mode().String() + ":" + string(b)
		}
		return nil
	})
	return m
}

// worktreeTree returns the tree id of the work tree's content, computed in
// a throwaway index so the checkout's own index is not touched.
func worktreeTree(t testing.TB, ws string) string {
	t.Helper()
	idx := filepath.Join(t.TempDir(), "index")
	cmd := exec.Command("sh", "-c", "git add -A && git write-tree")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+idx)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("write-tree: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

func openRepo(t testing.TB, ws string) *gitrepo.Repo {
	t.Helper()
	r, err := gitrepo.Open(context.Background(), config.FromOS(), ws)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func jobSpec(f *fixture) job.Spec {
	return job.Spec{Workspace: f.ws, Base: f.base, Backend: "claude", Model: "m"}
}

func jobCandidate(c *quarantine.Candidate) job.Candidate {
	return job.Candidate{Patch: c.Patch, Digest: c.Digest, Findings: c.Findings}
}
