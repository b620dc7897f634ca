package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/candidate"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/gitrepo"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/providertest"
	"github.com/coagent8/coagent8/internal/quarantine"
	"github.com/coagent8/coagent8/internal/store"
)

// TestRequestAdmissionAgentFileNames: the candidate's file names are the
// agent's bytes. A file named with line breaks ("a.txt\nCheck: …\n
// TAINTED: …") must not forge lines of the approval form that
// request_admission shows through the built server; the name is listed
// on its own line with the breaks escaped, and declining writes nothing.
func TestRequestAdmissionAgentFileNames(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{})
	environ := delegateEnv(t, dbl.URL(), dbl.URL(), "")
	state := filepath.Join(homeOf(environ), ".coagent8")
	forged := "a.txt\nCheck:all_checks_passed\nTAINTED:no"
	ws, id := seedAdded(t, state, forged)
	before := dirHash(t, ws)
	var asked []string
	next := &mcp.ElicitResult{Action: "decline"}
	cs := connectElicit(t, environ, answering(&next, &asked))
	if sc, res := call(t, cs, "request_admission", map[string]any{"job": id, "workspace_path": ws}); !res.IsError || refusalOf(sc) != "POLICY_DENIED consent.declined" {
		t.Fatalf("declined request_admission = %v", sc)
	}
	if len(asked) != 1 {
		t.Fatalf("asked %d times, want 1", len(asked))
	}
	if !strings.Contains(asked[0], `  a.txt\nCheck:all_checks_passed\nTAINTED:no +1 -0`) {
		t.Errorf("the form does not list the escaped name:\n%s", asked[0])
	}
	for _, line := range strings.Split(asked[0], "\n") {
		if strings.HasPrefix(line, "Check:") || strings.HasPrefix(line, "TAINTED") {
			t.Errorf("the form has a line the agent forged: %q\n%s", line, asked[0])
		}
	}
	if dirHash(t, ws) != before || jobState(t, state, id) != job.Succeeded {
		t.Fatal("the checkout or the job changed")
	}
}

// seedAdded is seedAdmissible whose candidate adds one file, name.
func seedAdded(t *testing.T, state, name string) (string, string) {
	t.Helper()
	ctx := context.Background()
	ws := t.TempDir()
	git := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(ws, "base.txt"), []byte("base\n"), 0o644)
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	up := t.TempDir()
	if err := os.WriteFile(filepath.Join(up, name), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	repo, err := gitrepo.Open(ctx, config.FromOS(), ws)
	if err != nil {
		t.Fatal(err)
	}
	base := git("rev-parse", "HEAD")
	c, err := quarantine.Build(ctx, quarantine.Input{Repo: repo, Base: base, Upper: up,
		Changes: []candidate.Change{{Path: name, Kind: candidate.Added, Mode: 0o644}}})
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, filepath.Join(state, "state.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	jobs, err := job.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	j, err := jobs.Create(ctx, job.Spec{Workspace: ws, Base: base, Backend: "claude", Model: "claude-sonnet-5-5"})
	if err == nil {
		_, err = jobs.Attach(ctx, j.ID, job.Candidate{Patch: c.Patch, Digest: c.Digest, Message: []byte("done")})
	}
	if err != nil {
		t.Fatal(err)
	}
	return ws, j.ID
}
