//go:build linux && amd64

package delegation

import (
	"bytes"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/adapter/claude"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/process"
	"github.com/coagent8/coagent8/internal/providertest"
	"github.com/coagent8/coagent8/internal/turn"
)

// TestReadSessionResumes (issue 15 scope 8): a session whose first turn
// ran in the read profile continues there: the real pinned Claude Code
// resumes its own session from the transcript kept under the handle
// (0600, in the state directory), the second turn's startup report is
// verified as the first's, and the double sees the second request carry
// the first turn's question and answer (the CLI resumed, not a fresh
// session).
func TestReadSessionResumes(t *testing.T) {
	rt, err := ResolveRuntime(pinnedCLI(t, "claude"))
	if err != nil {
		t.Fatal(err)
	}
	const model = "claude-sonnet-4-5"
	double := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: "FIRST-TURN-ANSWER"}})
	g := newGate(t, double.URL())
	_, phantom := grant(t, g, model)
	ws := canonicalTemp(t)
	r := newRunner(t)
	qualify(t, r, rt)
	b := claude.New(config.FromList([]string{"CLAUDE_PATH=" + pinnedCLI(t, "claude"), "PATH=/usr/bin:/bin"}), claude.Options{})
	handle := turn.NewHandle()
	run := func(n int, prompt, session string) (adapter.Result, *ReadLauncher) {
		t.Helper()
		l, err := r.ReadLauncher(ReadTurn{Runtime: rt, Phantom: phantom, PhantomVar: "ANTHROPIC_API_KEY", Gate: g})
		if err != nil {
			t.Fatal(err)
		}
		l.Bind(handle, n)
		res, err := b.Run(testCtx(t), adapter.Turn{Prompt: prompt, Workspace: ws, Model: model, SessionID: session, Launcher: l})
		if err != nil {
			t.Fatalf("turn %d: %v", n, err)
		}
		return res, l
	}
	first, l1 := run(1, "FIRST-QUESTION about main", "")
	if !l1.SessionKept() || first.Containment != adapter.ContainmentKernel {
		t.Fatalf("turn 1: kept %v containment %q", l1.SessionKept(), first.Containment)
	}
	st := sessionState{dir: sessionDir(r.stateDir, handle)}
	for _, p := range []string{st.recordPath(), st.transcriptPath()} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, %v; want an 0600 file", p, fi, err)
		}
	}
	seen := len(double.Requests())
	second, l2 := run(2, "SECOND-QUESTION", first.SessionID)
	got := []any{second.Containment, second.SessionID, l2.SessionKept(), second.Text}
	want := []any{adapter.ContainmentKernel, first.SessionID, true, "FIRST-TURN-ANSWER"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("turn 2 (-want +got):\n%s", diff)
	}
	if second.Verified != first.Verified {
		t.Errorf("turn 2 verified %q, want the first turn's report %q", second.Verified, first.Verified)
	}
	reqs := double.Requests()[seen:]
	if len(reqs) == 0 {
		t.Fatal("the double saw no request of turn 2")
	}
	body := string(reqs[len(reqs)-1].Body)
	for _, s := range []string{"FIRST-QUESTION about main", "FIRST-TURN-ANSWER", "SECOND-QUESTION"} {
		if !strings.Contains(body, s) {
			t.Errorf("turn 2's request lacks %q: the CLI did not resume its session", s)
		}
	}
}

// TestReadSessionStateRefused: a --resume whose kept state is missing,
// changed on disk, oversized, not owner-only or kept for another CLI
// session refuses with that reason, naming the file, before anything
// runs; a new CLI session (--session-id) in the same handle needs none.
func TestReadSessionStateRefused(t *testing.T) {
	const cli, other = "0b5a3c1e-9d2f-4e6a-8b7c-1d2e3f4a5b6c", "1c6b4d2f-0e3a-4f7b-9c8d-2e3f4a5b6c7d"
	r := newRunner(t)
	rt, err := ResolveRuntime(pinnedCLI(t, "claude"))
	if err != nil {
		t.Fatal(err)
	}
	qualify(t, r, rt)
	kept := func(t *testing.T, handle string) sessionState {
		st := sessionState{dir: sessionDir(r.stateDir, handle), handle: handle, cliSession: cli}
		out, err := st.begin()
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(out.Host, []byte(`{"type":"user"}`+"\n"), 0o600)
		if ok, err := st.commit(out); !ok || err != nil {
			t.Fatalf("commit: %v %v", ok, err)
		}
		t.Cleanup(func() { os.RemoveAll(st.dir) })
		return st
	}
	for _, tc := range []struct {
		name   string
		spoil  func(st sessionState)
		reason string
		names  func(st sessionState) string
	}{
		{"missing transcript", func(st sessionState) { os.Remove(st.transcriptPath()) }, ReasonSessionStateMissing, sessionState.transcriptPath},
		{"tampered transcript", func(st sessionState) { os.WriteFile(st.transcriptPath(), []byte(`{"type":"system"}`+"\n"), 0o600) },
			ReasonSessionStateCorrupt, sessionState.transcriptPath},
		{"oversized transcript", func(st sessionState) { os.Truncate(st.transcriptPath(), MaxSessionTranscript+1) },
			ReasonSessionStateOversized, sessionState.transcriptPath},
		{"transcript readable by others", func(st sessionState) { os.Chmod(st.transcriptPath(), 0o644) },
			ReasonSessionStateCorrupt, sessionState.transcriptPath},
		{"transcript a symlink", func(st sessionState) {
			os.Remove(st.transcriptPath())
			os.Symlink("/etc/passwd", st.transcriptPath())
		}, ReasonSessionStateCorrupt, sessionState.transcriptPath},
		{"transcript a FIFO", func(st sessionState) {
			os.Remove(st.transcriptPath())
			syscall.Mkfifo(st.transcriptPath(), 0o600)
		}, ReasonSessionStateCorrupt, sessionState.transcriptPath},
		{"record a FIFO", func(st sessionState) {
			os.Remove(st.recordPath())
			syscall.Mkfifo(st.recordPath(), 0o600)
		}, ReasonSessionStateCorrupt, sessionState.recordPath},
		{"record not JSON", func(st sessionState) { os.WriteFile(st.recordPath(), []byte("{"), 0o600) },
			ReasonSessionStateCorrupt, sessionState.recordPath},
		{"record of another CLI session", func(st sessionState) {
			(sessionState{dir: st.dir, handle: st.handle, cliSession: other}).write(sessionRecord{Version: 1, Handle: st.handle, CLISession: other})
		}, ReasonSessionStateCorrupt, sessionState.recordPath},
		{"record of another handle", func(st sessionState) {
			st.write(sessionRecord{Version: 1, Handle: "syn_sess_other", CLISession: cli, SHA256: "00", Bytes: 1})
		}, ReasonSessionStateCorrupt, sessionState.recordPath},
		{"state directory gone", func(st sessionState) { os.RemoveAll(st.dir) }, ReasonSessionStateMissing, sessionState.recordPath},
	} {
		t.Run(tc.name, func(t *testing.T) {
			handle := turn.NewHandle()
			st := kept(t, handle)
			tc.spoil(st)
			l, err := r.ReadLauncher(ReadTurn{Runtime: rt, Phantom: mustPhantom(), PhantomVar: "ANTHROPIC_API_KEY", Gate: newGate(t, "http://127.0.0.1:9")})
			if err != nil {
				t.Fatal(err)
			}
			l.Bind(handle, 2)
			_, err = l.Launch(testCtx(t), process.Spec{Path: rt.Executable, Args: []string{"-p", "--resume", cli}, Dir: canonicalTemp(t)})
			if got := reasonOf(err); got != tc.reason || !strings.Contains(err.Error(), tc.names(st)) {
				t.Errorf("Launch = %v (reason %q), want %s naming %s", err, got, tc.reason, tc.names(st))
			}
			if l.SessionKept() {
				t.Error("a refused turn reports its session kept")
			}
		})
	}
}

// TestReadSessionReuseOnHost: a session_mode auto turn (Reuse) that the
// store resolved to a continued session without read-profile state —
// its first turn ran on the host — runs on the host as the backend would
// without a launcher, and says so; a first turn or a session with kept
// state stays in the read profile.
func TestReadSessionReuseOnHost(t *testing.T) {
	r := newRunner(t)
	withState := turn.NewHandle()
	if err := os.MkdirAll(sessionDir(r.stateDir, withState), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sessionDir(r.stateDir, withState)) })
	for _, tc := range []struct {
		name        string
		handle      string
		turn        int
		containment string
		reason      string
	}{
		{"continued host session", turn.NewHandle(), 3, adapter.ContainmentProfile, HostSessionReason},
		{"new session", turn.NewHandle(), 1, adapter.ContainmentKernel, ""},
		{"continued read-profile session", withState, 2, adapter.ContainmentKernel, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := r.ReadLauncher(ReadTurn{Runtime: Runtime{Executable: "/usr/bin/true", Digest: "sha256:00"}, Phantom: mustPhantom(),
				PhantomVar: "ANTHROPIC_API_KEY", Gate: newGate(t, "http://127.0.0.1:9"), Reuse: true})
			if err != nil {
				t.Fatal(err)
			}
			l.Bind(tc.handle, tc.turn)
			got := []string{l.Containment(), l.ContainmentReason()}
			if diff := cmp.Diff([]string{tc.containment, tc.reason}, got); diff != "" {
				t.Errorf("containment (-want +got):\n%s", diff)
			}
		})
	}
	// On the host the launcher starts s itself: /bin/echo, not the runtime.
	l, _ := r.ReadLauncher(ReadTurn{Runtime: Runtime{Executable: "/usr/bin/true", Digest: "sha256:00"}, Phantom: mustPhantom(),
		PhantomVar: "ANTHROPIC_API_KEY", Gate: newGate(t, "http://127.0.0.1:9"), Reuse: true})
	host := turn.NewHandle()
	l.Bind(host, 2)
	p, err := l.Launch(testCtx(t), process.Spec{Path: "/bin/echo", Args: []string{"on-host"}, Dir: canonicalTemp(t), Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	out.ReadFrom(p.Stdout())
	if code, _ := p.Wait(); code != 0 || strings.TrimSpace(out.String()) != "on-host" {
		t.Errorf("host run: exit %d, output %q", code, out.String())
	}
	if HasSessionState(r.stateDir, host) {
		t.Error("a host turn left read-profile state under its handle")
	}
}

// TestReadSessionPrune: a new read-profile session removes the kept
// state of sessions last written over a day ago (they cannot continue:
// a session idle for 2 hours expires) and keeps recent ones.
func TestReadSessionPrune(t *testing.T) {
	state := t.TempDir()
	kept := func(handle string, age time.Duration) string {
		st := sessionState{dir: sessionDir(state, handle), handle: handle, cliSession: "0b5a3c1e-9d2f-4e6a-8b7c-1d2e3f4a5b6c"}
		if _, err := st.begin(); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-age)
		os.Chtimes(st.recordPath(), old, old)
		return st.dir
	}
	stale, recent := kept("syn_sess_stale", 25*time.Hour), kept("syn_sess_recent", 23*time.Hour)
	kept("syn_sess_new", 0)
	got := []bool{HasSessionState(state, "syn_sess_stale"), HasSessionState(state, "syn_sess_recent")}
	if diff := cmp.Diff([]bool{false, true}, got); diff != "" {
		t.Errorf("kept after prune (-want +got):\n%s\n%s %s", diff, stale, recent)
	}
}
