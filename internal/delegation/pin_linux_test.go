//go:build linux && amd64

package delegation

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/adapter/claude"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/providertest"
)

// TestRuntimePinCheck: the check the sandbox runs on the mounted
// executable accepts the file whose key the digest was taken at (no
// re-hash), or any file whose SHA-256 is the runtime's digest, and
// refuses other content with delegation.runtime_digest (issue 15 scope
// 5: what is mounted is what was qualified).
func TestRuntimePinCheck(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "cli")
	if err := os.WriteFile(exe, []byte("qualified\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	rt, err := ResolveRuntime(exe)
	if err != nil || rt.key == "" {
		t.Fatalf("resolve: %+v %v (want a key)", rt, err)
	}
	rewrite := func(body string) {
		t.Helper()
		time.Sleep(10 * time.Millisecond) // a new mtime whatever the clock granularity
		if err := os.WriteFile(exe, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name   string
		change func()
		reason string // "" = accepted
	}{
		{"unchanged", func() {}, ""},
		{"rewritten, same content", func() { rewrite("qualified\n") }, ""},
		{"other content", func() { rewrite("swapped\n") }, "delegation.runtime_digest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.change()
			f, err := os.Open(exe)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			err = runtimePin(rt).Check(f)
			var fe *fault.Error
			switch {
			case tc.reason == "" && err != nil:
				t.Errorf("check: %v, want accepted", err)
			case tc.reason != "" && (!errors.As(err, &fe) || fe.Code != fault.SandboxUnavailable || fe.Reason != tc.reason):
				t.Errorf("check: %v, want SANDBOX_UNAVAILABLE %s", err, tc.reason)
			}
		})
	}
	if got := runtimePin(rt).Path; got != rt.Executable {
		t.Errorf("pin path %q, want %q", got, rt.Executable)
	}
}

// pinnedStream stands in for Claude Code in the read profile: it
// qualifies (--version), reports a valid read-only startup for the
// session id of its argv and a first text delta, waits until the test
// writes workspace/go (a file that exists from the start: the read
// profile's overlay shows a file's new content at once, a name created
// after the view was looked up not reliably), and ends with a successful
// result. Its second line is what the test overwrites in place.
const pinnedStream = `#!/bin/bash
# pinned-v1
if [ "$1" = --version ]; then echo "2.1.328 (Claude Code)"; exit 0; fi
cat >/dev/null
sid=; prev=
for a in "$@"; do if [ "$prev" = --session-id ] || [ "$prev" = --resume ]; then sid=$a; fi; prev=$a; done
echo '{"type":"system","subtype":"init","session_id":"'"$sid"'","tools":["Glob","Grep","Read"],"mcp_servers":[],"model":"claude-sonnet-4-5","permissionMode":"dontAsk","plugins":[{"name":"p","path":"builtin"}],"claude_code_version":"2.1.328"}'
echo '{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"partial"}}}'
while [ ! -s /job/workspace/go ]; do sleep 0.05; done
echo '{"type":"result","subtype":"success","is_error":false,"result":"PINNED-ANSWER","usage":{"input_tokens":3,"output_tokens":4},"total_cost_usd":0.01}'
`

// onDelta runs do at the turn's first text delta (the CLI then waits).
type onDelta struct {
	once sync.Once
	do   func()
}

func (o *onDelta) Delta(string)            { o.once.Do(o.do) }
func (o *onDelta) Activity(string, string) {}
func (o *onDelta) Warning(string)          {}

// TestReadProfileRefusesAnswerOfChangedRuntime (issue 15 scope 5): a
// read-profile consult whose pinned runtime is written in place while it
// runs — after its startup report, before its final result; the file is
// a script, so not busy — returns SANDBOX_UNAVAILABLE
// sandbox.pin_changed naming the file, never the answer the CLI gave;
// the unchanged runtime's answer is returned. Before the pin watch the
// answer of the changed runtime was returned.
func TestReadProfileRefusesAnswerOfChangedRuntime(t *testing.T) {
	dir, err := os.MkdirTemp("/var/tmp", "coagent8-read-pin-") // /tmp is the sandbox's own
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	exe := filepath.Join(dir, "claude")
	if err := os.WriteFile(exe, []byte(pinnedStream), 0o755); err != nil {
		t.Fatal(err)
	}
	rt, err := ResolveRuntime(exe)
	if err != nil {
		t.Fatal(err)
	}
	const model = "claude-sonnet-4-5"
	double := providertest.NewAnthropic(t, providertest.Options{})
	g := newGate(t, double.URL())
	ws := canonicalTemp(t)
	r := newRunner(t)
	qualify(t, r, rt)
	for _, tc := range []struct {
		name   string
		change bool
		reason string // "" = the answer
	}{
		{"unchanged", false, ""},
		{"written in place during the turn", true, "sandbox.pin_changed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			goFile := filepath.Join(ws, "go")
			if err := os.WriteFile(goFile, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			_, phantom := grant(t, g, model)
			l, err := r.ReadLauncher(ReadTurn{Runtime: rt, Phantom: phantom, PhantomVar: "ANTHROPIC_API_KEY", Gate: g})
			if err != nil {
				t.Fatal(err)
			}
			obs := &onDelta{do: func() {
				if tc.change {
					f, err := os.OpenFile(exe, os.O_WRONLY, 0)
					if err != nil {
						t.Error(err)
						return
					}
					if _, err := f.WriteAt([]byte("v2"), int64(strings.Index(pinnedStream, "v1"))); err != nil {
						t.Error(err)
					}
					f.Close()
				}
				if err := os.WriteFile(goFile, []byte("go\n"), 0o644); err != nil {
					t.Error(err)
				}
			}}
			b := claude.New(config.FromList([]string{"CLAUDE_PATH=" + exe, "PATH=/usr/bin:/bin"}), claude.Options{})
			res, err := b.Run(testCtx(t), adapter.Turn{Prompt: "q", Workspace: ws, Model: model, Launcher: l, Observer: obs})
			var fe *fault.Error
			switch {
			case tc.reason == "" && (err != nil || res.Text != "PINNED-ANSWER"):
				t.Fatalf("turn: %+v %v, want the answer", res, err)
			case tc.reason != "" && (!errors.As(err, &fe) || fe.Code != fault.SandboxUnavailable || fe.Reason != tc.reason ||
				!strings.Contains(fe.Message, exe)):
				t.Fatalf("turn: %v, want SANDBOX_UNAVAILABLE %s naming %s", err, tc.reason, exe)
			case tc.reason != "" && res.Text != "":
				t.Errorf("the changed runtime's answer %q was returned", res.Text)
			}
		})
	}
}

// TestDelegatedJobRefusesChangedRuntime (issue 15 scope 5): a delegated
// job whose pinned runtime (here a script standing in for Claude Code,
// so not busy while it runs) is written in place during the run fails
// with SANDBOX_UNAVAILABLE sandbox.pin_changed, not tainted (see
// runtimePin), and its receipt lists the file; the unchanged runtime's
// job succeeds. Before the pin watch the changed runtime's job
// succeeded.
func TestDelegatedJobRefusesChangedRuntime(t *testing.T) {
	dir, err := os.MkdirTemp("/var/tmp", "coagent8-job-pin-") // /tmp is the sandbox's own
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	const model = "claude-sonnet-4-5"
	exe := filepath.Join(dir, "claude")
	script := "#!/bin/bash\n# pinned-v1\nif [ \"$1\" = --version ]; then echo \"" + ClaudeVersion + " (Claude Code)\"; exit 0; fi\n" +
		`echo '{"type":"system","subtype":"init","tools":["` + strings.Join(ClaudeTools, `","`) + `"],"permissionMode":"` +
		ClaudePermissionMode + `","mcp_servers":[],"model":"` + model + `","claude_code_version":"` + ClaudeVersion +
		`","cwd":"/job/workspace"}'` + "\necho ready\n"
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	rt, err := ResolveRuntime(exe)
	if err != nil {
		t.Fatal(err)
	}
	double := providertest.NewAnthropic(t, providertest.Options{})
	g := newGate(t, double.URL())
	r := newRunner(t)
	qualify(t, r, rt)
	for _, tc := range []struct {
		name   string
		change bool
		reason string // "" = success
	}{
		{"unchanged", false, ""},
		{"written in place during the run", true, "sandbox.pin_changed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gr, phantom := grant(t, g, model)
			out := &onLine{line: "ready", do: func() {
				if tc.change {
					f, err := os.OpenFile(exe, os.O_WRONLY, 0)
					if err != nil {
						t.Error(err)
						return
					}
					f.WriteAt([]byte("v2"), int64(strings.Index(script, "v1")))
					f.Close()
				}
			}}
			res, err := r.Run(testCtx(t), Job{Runtime: rt, Model: model, Prompt: "p", Workspace: t.TempDir(), CandidateDir: t.TempDir(),
				Phantom: phantom, Grant: gr.ID, Gate: g, Stdout: out})
			var fe *fault.Error
			switch {
			case tc.reason == "" && (err != nil || !res.Receipt.Exit.Success()):
				t.Fatalf("job: %v, exit %+v, want success", err, res.Receipt.Exit)
			case tc.reason != "" && (!errors.As(err, &fe) || fe.Code != fault.SandboxUnavailable || fe.Reason != tc.reason):
				t.Fatalf("job: %v, want SANDBOX_UNAVAILABLE %s", err, tc.reason)
			}
			var want []string
			if tc.change {
				want = []string{exe}
			}
			if d := cmp.Diff(want, res.Receipt.PinsChanged); d != "" || res.Tainted {
				t.Errorf("receipt pins_changed (-want +got):\n%s tainted %v", d, res.Tainted)
			}
		})
	}
}

// onLine runs do at the first output line that is line.
type onLine struct {
	mu   sync.Mutex
	buf  strings.Builder
	line string
	do   func()
	done bool
}

func (o *onLine) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf.Write(b)
	if !o.done && strings.Contains(o.buf.String(), "\n"+o.line+"\n") {
		o.done = true
		o.do()
	}
	return len(b), nil
}
