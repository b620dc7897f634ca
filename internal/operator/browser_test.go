package operator

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
)

// screenshotDir is where the browser tests leave their screenshots (test
// artifacts; bench/results/ is git-ignored).
var screenshotDir = filepath.Join("..", "..", "bench", "results", "operator")

// browser starts headless Chromium (the Debian package chromium, which
// scripts/install.sh installs) with a tab that answers the dashboard's
// Basic challenge with cred — the browser's own login flow: a 401 with
// WWW-Authenticate, then credentials for the realm.
func browser(t *testing.T, ts *testServer, cred string) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium not found (bash scripts/install.sh installs it): %v", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.WindowSize(1360, 900), chromedp.Flag("disable-gpu", true), chromedp.UserDataDir(t.TempDir()))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelT(); cancel(); cancelA() })
	paused, auth := chromedp.Events(ctx, fetch.RequestPaused), chromedp.Events(ctx, fetch.AuthRequired)
	yes := true
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{HandleAuthRequests: &yes}); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	go func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			go chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
		}
	}()
	go func() {
		tried := map[string]bool{} // a URL challenged again: the credential failed; give up as a user would
		for ev, err := range auth {
			if err != nil {
				return
			}
			resp := &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseProvideCredentials, Username: User, Password: cred}
			if tried[ev.Request.URL] {
				resp = &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseCancelAuth}
			}
			tried[ev.Request.URL] = true
			go chromedp.Call(ctx, fetch.ContinueWithAuth, fetch.ContinueWithAuthParams{RequestID: ev.RequestID, AuthChallengeResponse: resp})
		}
	}()
	return ctx
}

func do(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// waitTrue polls js in the page until it is true.
func waitTrue(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := chromedp.Run(pctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // quality 100 is PNG; below it, JPEG
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(screenshotDir, name+".png"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// evil is untrusted content: markup that would run script if it were
// ever treated as HTML.
const evil = `<script>window.pwned="script"</script><img src=x onerror="window.pwned='img'"><a href="javascript:window.pwned='link'">open</a>`

// noScriptRan checks the page: nothing set window.pwned, no javascript:
// link and no image exist, and the only script element is the embedded one.
func noScriptRan(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	got := eval[string](t, ctx, `JSON.stringify({pwned: String(window.pwned), links: document.querySelectorAll('a[href^="javascript:"]').length,
		imgs: document.images.length, scripts: Array.from(document.scripts).map(s => s.getAttribute("src")).join(",")})`)
	if want := `{"pwned":"undefined","links":0,"imgs":0,"scripts":"/assets/app.js"}`; got != want {
		t.Errorf("%s: %s, want %s", where, got, want)
	}
}

// fakeCandidates is a candidate source standing in for the delegate job
// (issue 16): it records admissions and rejections.
type fakeCandidates struct {
	mu       sync.Mutex
	c        Candidate
	admitted []string
	rejected []string
	acks     []string
}

func (f *fakeCandidates) List(context.Context) ([]CandidateSummary, error) {
	return []CandidateSummary{f.c.CandidateSummary}, nil
}

func (f *fakeCandidates) Get(_ context.Context, id string) (Candidate, error) {
	if id != f.c.ID {
		return Candidate{}, fault.New(fault.InvalidInput, "candidate.unknown", "no candidate "+id)
	}
	return f.c, nil
}

func (f *fakeCandidates) Admit(_ context.Context, id, _ string, ack []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acks = append(f.acks, ack...)
	for _, a := range f.admitted {
		if a == id {
			return fault.New(fault.InvalidInput, "candidate.admitted_twice", "candidate "+id+" is already admitted")
		}
	}
	f.admitted = append(f.admitted, id)
	return nil
}

func (f *fakeCandidates) Reject(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rejected = append(f.rejected, id)
	return nil
}

var _ Candidates = (*fakeCandidates)(nil)

func (f *fakeCandidates) admissions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.admitted...)
}

// TestOperatorBrowser drives the dashboard in headless Chromium: log in,
// see a running job's progress and a new security event arrive without a
// reload, check injected markup never runs, post actions through the
// Origin and CSRF checks, and save screenshots of the main pages.
func TestOperatorBrowser(t *testing.T) {
	dir := t.TempDir()
	o := newOwners(t, dir)
	seedDemo(t, o)
	o.event(event.Event{Type: event.TypeRefusal, Code: "POLICY_DENIED", Reason: "egress.category " + evil, Rule: "egress",
		IDs: map[string]string{"job_id": "job-evil"}, Detail: evil})
	o.decision("deny", "egress.category "+evil)
	cands := &fakeCandidates{c: Candidate{CandidateSummary: CandidateSummary{ID: "cand-1", Job: "job-7f3a", State: "quarantined",
		Created: time.Now(), Findings: 1},
		Diff:       "diff --git a/page.html b/page.html\n--- a/page.html\n+++ b/page.html\n@@ -1,2 +1,3 @@\n <p>hello</p>\n-<p>old</p>\n+" + evil + "\n+[docs](javascript:window.pwned='md')\n",
		Findings:   []Finding{{Severity: "P2", Rule: "html.script", File: "page.html", Line: 3, Message: "adds " + evil}},
		Checks:     []Check{{Command: "go test ./...", Status: "passed", Exit: 0}},
		Provenance: map[string]string{"backend": "claude", "model": "claude-sonnet-5"}}}
	ts := start(t, Options{StateDir: dir, Candidates: cands, Doctor: demoDoctor})

	ctx := browser(t, ts, ts.cred.Password().Reveal())
	do(t, ctx, "log in", chromedp.Navigate(ts.url+"/"))
	waitTrue(t, ctx, "live stream connected", `document.getElementById("live").textContent.startsWith("live")`)
	waitTrue(t, ctx, "overview probed", `document.body.innerText.includes("operational")`)
	noScriptRan(t, ctx, "overview")
	screenshot(t, ctx, "overview")

	t.Run("running job progress updates live", func(t *testing.T) {
		do(t, ctx, "jobs", chromedp.Navigate(ts.url+"/jobs"))
		waitTrue(t, ctx, "live", `document.getElementById("live").textContent.startsWith("live")`)
		eval[bool](t, ctx, `window.marker = true`)
		before := eval[float64](t, ctx, `document.querySelector('tr[data-job="job-7f3a"] progress').value`)
		o.use("job-7f3a", 3, 42000, 350000000)
		waitTrue(t, ctx, "progress grew", `document.querySelector('tr[data-job="job-7f3a"] progress').value > `+ftoa(before))
		if !eval[bool](t, ctx, `window.marker === true`) {
			t.Error("the page reloaded instead of updating")
		}
		screenshot(t, ctx, "jobs")
	})

	t.Run("new security event appears live and inert", func(t *testing.T) {
		do(t, ctx, "events", chromedp.Navigate(ts.url+"/events"))
		waitTrue(t, ctx, "live", `document.getElementById("live").textContent.startsWith("live")`)
		eval[bool](t, ctx, `window.marker = true`)
		o.event(event.Event{Type: event.TypeRefusal, Code: "POLICY_DENIED", Reason: "browser.live_event", Rule: "test", Detail: evil})
		waitTrue(t, ctx, "event shown", `document.querySelector("#events").innerText.includes("browser.live_event")`)
		if !eval[bool](t, ctx, `window.marker === true`) {
			t.Error("the page reloaded instead of updating")
		}
		noScriptRan(t, ctx, "events after a live update")
		screenshot(t, ctx, "events")
	})

	for _, p := range []string{"grants", "egress", "sessions"} {
		do(t, ctx, p, chromedp.Navigate(ts.url+"/"+p))
		waitTrue(t, ctx, p+" live", `document.getElementById("live").textContent.startsWith("live")`)
		noScriptRan(t, ctx, p)
		screenshot(t, ctx, p)
	}

	t.Run("candidate diff inert; admit and reject pass the request chain", func(t *testing.T) {
		do(t, ctx, "candidate", chromedp.Navigate(ts.url+"/candidates/cand-1"))
		waitTrue(t, ctx, "diff shown", `document.getElementById("diff").innerText.includes("<script>window.pwned")`)
		noScriptRan(t, ctx, "candidate")
		screenshot(t, ctx, "candidate")
		do(t, ctx, "admit", chromedp.Click(chromedp.ID("admit")))
		waitTrue(t, ctx, "admitted", `(document.getElementById("notice")||{}).innerText === "Candidate cand-1 admitted."`)
		if got := cands.admissions(); len(got) != 1 || got[0] != "cand-1" {
			t.Errorf("admissions %v", got)
		}
		do(t, ctx, "candidate again", chromedp.Navigate(ts.url+"/candidates/cand-1"))
		waitTrue(t, ctx, "loaded", `!!document.getElementById("admit")`)
		do(t, ctx, "admit twice", chromedp.Click(chromedp.ID("admit")))
		waitTrue(t, ctx, "typed error shown", `(document.getElementById("error")||{innerText:""}).innerText.includes("candidate.admitted_twice")`)
		do(t, ctx, "candidate for reject", chromedp.Navigate(ts.url+"/candidates/cand-1"))
		waitTrue(t, ctx, "loaded", `!!document.getElementById("reject")`)
		do(t, ctx, "reject", chromedp.Click(chromedp.ID("reject")))
		waitTrue(t, ctx, "rejected", `(document.getElementById("notice")||{}).innerText === "Candidate cand-1 rejected."`)
		do(t, ctx, "unknown candidate", chromedp.Navigate(ts.url+"/candidates/nope"))
		waitTrue(t, ctx, "typed error", `(document.getElementById("error")||{innerText:""}).innerText.includes("candidate.unknown")`)
	})

	t.Run("lifecycle refused in the page", func(t *testing.T) {
		do(t, ctx, "overview", chromedp.Navigate(ts.url+"/"))
		waitTrue(t, ctx, "loaded", `!!document.getElementById("lifecycle-stop")`)
		do(t, ctx, "stop", chromedp.Click(chromedp.ID("lifecycle-stop")))
		waitTrue(t, ctx, "refusal shown", `(document.getElementById("error")||{innerText:""}).innerText.includes("LIFECYCLE_UNAVAILABLE")`)
	})
}

// TestOperatorBrowserWrongCredential: the browser's login with a wrong
// password ends at the 401 and a security event, with nothing of the page.
func TestOperatorBrowserWrongCredential(t *testing.T) {
	ts := start(t, Options{})
	ctx := browser(t, ts, "not-the-credential")
	do(t, ctx, "navigate", chromedp.Navigate(ts.url+"/"))
	body := eval[string](t, ctx, `document.body.innerText.trim()`)
	if body != "operator.auth_invalid" {
		t.Errorf("page shows %q", body)
	}
	if !contains(ts.refusals(), "operator.auth_invalid") {
		t.Errorf("no security event; have %v", ts.refusals())
	}
}
