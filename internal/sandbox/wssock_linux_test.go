//go:build linux && amd64

package sandbox

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkspaceSocketsUnreachable: a unix socket is reached by its
// inode, and the user's workspace can hold live ones (a development
// database's, a language server's). The read profile bound the workspace
// itself, so the agent connected to a host process through it: Landlock
// below ABI 9 does not govern connect, and the read-only mount does not
// either; nor did the read-only projection of a linked worktree's git
// directory (git's own daemons keep sockets there). Each profile that
// shows the workspace must leave such a socket unreachable (the
// candidate's overlay already did), and the host listener must see
// nothing.
func TestWorkspaceSocketsUnreachable(t *testing.T) {
	s := newTestSandbox(t)
	gate := func(ln net.Listener) {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "gate") }))
	}
	for _, profile := range []string{"read", "candidate", "read git dir", "candidate git dir"} {
		t.Run(profile, func(t *testing.T) {
			ws := t.TempDir()
			if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			host, inside := filepath.Join(ws, "dev.sock"), insideWorkspace+"/dev.sock"
			if strings.HasSuffix(profile, "git dir") {
				l := linkedWorktree(t)
				ws = l.ws
				host = filepath.Join(l.gitHome, ".git", "d.sock")
				inside = host // an absolute gitdir is projected at its host path
			}
			n := countingUnix(t, host)
			spec := AgentSpec{GatePort: 8080, Gate: gate}
			if strings.HasPrefix(profile, "read") {
				spec.Read = ws
			} else {
				spec.Candidate = &Candidate{Workspace: ws, Dir: t.TempDir()}
			}
			arg, _ := json.Marshal(agentAttempts{GatePort: 8080, Unix: []string{inside}})
			res, _ := runAgentProbe(t, s, spec, string(arg))
			if got := res["unix "+inside]; got == "ok" || n.Load() != 0 {
				t.Errorf("connect to the workspace's host socket: %q, the host listener saw %d connections", got, n.Load())
			}
			if got, want := res["gate"], "ok: 200 OK gate"; got != want {
				t.Errorf("gate from inside: got %q, want %q", got, want)
			}
		})
	}
}
