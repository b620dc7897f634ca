package operator

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/coagent8/coagent8/internal/admission"
	"github.com/coagent8/coagent8/internal/candidate"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/gitrepo"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/quarantine"
	"github.com/coagent8/coagent8/internal/store"
)

// checkout is a real Git checkout with a real job store beside it: jobs
// whose candidates are built by internal/quarantine from candidate
// changes, as the delegate job builds them (no sandbox needed).
type checkout struct {
	dir, base string
	repo      *gitrepo.Repo
	jobs      *job.Store
	adm       *admission.Admitter
}

func newCheckout(t *testing.T, state string) *checkout {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	for p, c := range map[string]string{"greet.txt": "hello\n", "keep.txt": "keep\n"} {
		os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644)
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "base")
	ctx := context.Background()
	repo, err := gitrepo.Open(ctx, config.FromOS(), dir)
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, filepath.Join(state, "state.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	jobs, err := job.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	adm, err := admission.New(ctx, admission.Options{Jobs: jobs, Env: config.FromOS(), StateDir: state, Events: &event.Memory{}})
	if err != nil {
		t.Fatal(err)
	}
	return &checkout{dir: repo.Top, base: git(t, dir, "rev-parse", "HEAD"), repo: repo, jobs: jobs, adm: adm}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.invalid",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.invalid", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// job creates a job whose agent wrote files over the base ([checkout.candidate])
// and attaches its candidate.
func (c *checkout) job(t *testing.T, files map[string]string) string {
	t.Helper()
	ctx := context.Background()
	cand := c.candidate(t, files)
	j, err := c.jobs.Create(ctx, job.Spec{Workspace: c.dir, Base: c.base, Backend: "claude", Model: "claude-sonnet-5-5",
		Budget: job.Budget{MaxUSD: 1, MaxRequests: 10, MaxMinutes: 5}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.jobs.Attach(ctx, j.ID, cand); err != nil {
		t.Fatal(err)
	}
	return j.ID
}

// candidate builds (quarantine.Build) the candidate of an agent that
// wrote files (path → content) over the base: modified when the path
// exists in the checkout, else added.
func (c *checkout) candidate(t *testing.T, files map[string]string) job.Candidate {
	t.Helper()
	ctx := context.Background()
	up := t.TempDir()
	var changes []candidate.Change
	for p, body := range files {
		if err := os.WriteFile(filepath.Join(up, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		ch := candidate.Change{Path: p, Kind: candidate.Added, Mode: 0o644}
		if _, err := os.Stat(filepath.Join(c.dir, p)); err == nil {
			ch.Kind, ch.OldMode = candidate.Modified, 0o644
		}
		changes = append(changes, ch)
	}
	cand, err := quarantine.Build(ctx, quarantine.Input{Repo: c.repo, Base: c.base, Upper: up, Changes: changes})
	if err != nil {
		t.Fatal(err)
	}
	return job.Candidate{Patch: cand.Patch, Digest: cand.Digest, Findings: cand.Findings, Message: []byte("done")}
}

func (c *checkout) read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.dir, p))
	if os.IsNotExist(err) {
		return "<absent>"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (c *checkout) state(t *testing.T, id string) string {
	t.Helper()
	j, err := c.jobs.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return j.State.String()
}

// TestOperatorBrowserAdmission drives admission from the dashboard in
// headless Chromium over a real job store, a real checkout and real
// quarantined candidates: the list shows each candidate's diff summary
// and taint; admitting a clean one changes the checkout; a tainted one
// shows its reason and is refused without the acknowledgement (nothing
// written), then admitted with it; admitting twice is a typed error; and
// with JavaScript disabled the plain HTML forms still reject and log out.
func TestOperatorBrowserAdmission(t *testing.T) {
	state := t.TempDir()
	co := newCheckout(t, state)
	clean := co.job(t, map[string]string{"greet.txt": "hello, world\n", "new.txt": "new\n"})
	tainted := co.job(t, map[string]string{"config.txt": "token = \"ghp_" + strings.Repeat("Ab3", 12) + "\"\n"})
	other := co.job(t, map[string]string{"other.txt": "other\n"})
	ts := start(t, Options{StateDir: state, Candidates: NewJobCandidates(co.jobs, co.adm)})
	ctx := browser(t, ts, ts.cred.Password().Reveal())
	text := func(id string) string { return `(document.getElementById("` + id + `")||{innerText:""}).innerText` }

	do(t, ctx, "candidates", chromedp.Navigate(ts.url+"/candidates"))
	waitTrue(t, ctx, "list", `document.getElementById("candidates").innerText.includes("`+clean+`")`)
	row := eval[string](t, ctx, `document.querySelector('a[href="/candidates/`+clean+`"]').closest("tr").innerText`)
	if !strings.Contains(row, "2 file(s), +2 −1") {
		t.Errorf("clean candidate row %q lacks its diff summary", row)
	}
	trow := eval[string](t, ctx, `document.querySelector('a[href="/candidates/`+tainted+`"]').closest("tr").innerText`)
	if !strings.Contains(trow, "secret.credential in config.txt") || strings.Contains(trow, "ghp_") {
		t.Errorf("tainted candidate row %q: want its taint reason and no token", trow)
	}
	screenshot(t, ctx, "candidates")

	t.Run("admit a clean candidate", func(t *testing.T) {
		do(t, ctx, "open", chromedp.Navigate(ts.url+"/candidates/"+clean))
		waitTrue(t, ctx, "diff", `document.getElementById("diff").innerText.includes("+hello, world")`)
		if co.read(t, "greet.txt") != "hello\n" {
			t.Fatal("the checkout changed before admission")
		}
		do(t, ctx, "admit", chromedp.Click(chromedp.ID("admit")))
		waitPage(t, ctx, "admitted", text("notice")+` === "Candidate `+clean+` admitted."`)
		if got := co.read(t, "greet.txt") + co.read(t, "new.txt"); got != "hello, world\nnew\n" {
			t.Errorf("checkout after admission: %q", got)
		}
		if s := co.state(t, clean); s != "admitted" {
			t.Errorf("job state %s, want admitted", s)
		}
		do(t, ctx, "again", chromedp.Navigate(ts.url+"/candidates/"+clean))
		waitTrue(t, ctx, "loaded", `!!document.getElementById("admit")`)
		do(t, ctx, "admit twice", chromedp.Click(chromedp.ID("admit")))
		waitTrue(t, ctx, "typed error", text("error")+`.includes("admission.admitted")`)
	})

	t.Run("tainted needs the acknowledgement", func(t *testing.T) {
		do(t, ctx, "open", chromedp.Navigate(ts.url+"/candidates/"+tainted))
		waitTrue(t, ctx, "taint shown", text("taint")+`.includes("secret.credential in config.txt")`)
		if !eval[bool](t, ctx, `document.querySelector('label:has(#ack-tainted)').innerText.includes("secret.credential in config.txt")`) {
			t.Error("the acknowledgement does not show the taint reason")
		}
		screenshot(t, ctx, "candidate-tainted")
		do(t, ctx, "admit unacknowledged", chromedp.Click(chromedp.ID("admit")))
		waitTrue(t, ctx, "refused", text("error")+`.includes("admission.taint_unacknowledged")`)
		if got := co.read(t, "config.txt"); got != "<absent>" || co.state(t, tainted) != "tainted" {
			t.Fatalf("refused admission wrote %q / state %s", got, co.state(t, tainted))
		}
		do(t, ctx, "reopen", chromedp.Navigate(ts.url+"/candidates/"+tainted))
		waitTrue(t, ctx, "loaded", `!!document.getElementById("ack-tainted")`)
		do(t, ctx, "acknowledge and admit", chromedp.Click(chromedp.ID("ack-tainted")), chromedp.Click(chromedp.ID("admit")))
		waitPage(t, ctx, "admitted", text("notice")+` === "Candidate `+tainted+` admitted."`)
		if !strings.HasPrefix(co.read(t, "config.txt"), "token = ") {
			t.Error("acknowledged admission did not write config.txt")
		}
	})

	t.Run("without JavaScript: reject and log out by plain forms", func(t *testing.T) {
		if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
			t.Fatalf("disable scripts: %v", err)
		}
		do(t, ctx, "open", chromedp.Navigate(ts.url+"/candidates/"+other))
		waitTrue(t, ctx, "loaded", `!!document.getElementById("reject")`)
		do(t, ctx, "reject", chromedp.Click(chromedp.ID("reject")), chromedp.WaitVisible(chromedp.ID("notice")))
		waitTrue(t, ctx, "rejected page", text("notice")+` === "Candidate `+other+` rejected."`)
		if s := co.state(t, other); s != "rejected" {
			t.Errorf("job state %s, want rejected", s)
		}
		if got := eval[string](t, ctx, `location.pathname`); got != "/candidates/"+other+"/reject" {
			t.Errorf("a plain form navigation was expected, at %s", got)
		}
		eval[bool](t, ctx, `document.getElementById("notice").remove() === undefined`)
		do(t, ctx, "log out", chromedp.Click(chromedp.ID("logout")), chromedp.WaitVisible(chromedp.ID("notice")))
		waitTrue(t, ctx, "logged out", text("notice")+`.startsWith("Logged out")`)
		if got := co.read(t, "other.txt"); got != "<absent>" {
			t.Errorf("rejected candidate wrote other.txt: %q", got)
		}
	})
}

// waitPage is waitTrue that shows the page's main text when it fails.
func waitPage(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := chromedp.Run(pctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Fatalf("%s: %v; page: %s", what, err, eval[string](t, ctx, `document.getElementById("main").innerText`))
	}
}
