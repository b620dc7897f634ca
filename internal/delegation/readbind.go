package delegation

import (
	"os"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/sandbox"
)

// launchSession is the coagent8 session a read turn belongs to, set by
// [ReadLauncher.Bind], and what became of its CLI state.
type launchSession struct {
	handle string
	turn   int
	host   bool // a reused session whose CLI session lives on the host
	kept   bool // the run's transcript was kept: the session can continue
}

// HostSessionReason is the containment reason of a continued session
// that lives on the host.
const HostSessionReason = "a continued session whose first turn ran on the host continues there, where its CLI session lives: the CLI's verified read-only profile on the host"

// Bind tells the launcher which coagent8 session and turn (1-based) it
// runs, once the session's lease is held and before [Launch]: the
// session's CLI state is then kept after the run under the handle
// (state directory/delegation/sessions), and given back to a later
// --resume of it. For a [ReadTurn.Reuse] turn, a continued session
// without read-profile state runs on the host. Without Bind (no
// session) nothing is kept.
func (l *ReadLauncher) Bind(handle string, turn int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sess = launchSession{handle: handle, turn: turn,
		host: l.t.Reuse && turn > 1 && !HasSessionState(l.r.stateDir, handle)}
}

func (l *ReadLauncher) onHost() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sess.host
}

// ContainmentReason is why a turn [Bind] sent to the host runs there,
// "" otherwise (the governed path's reason stands).
func (l *ReadLauncher) ContainmentReason() string {
	if l.onHost() {
		return HostSessionReason
	}
	return ""
}

// SessionKept reports whether the ended run's CLI session was kept, so
// the coagent8 session can continue in the read profile.
func (l *ReadLauncher) SessionKept() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sess.kept
}

// keptSession carries a run's CLI session state in and out.
type keptSession struct {
	l       *ReadLauncher
	st      sessionState
	in, out []sandbox.ScratchFile
}

// prepareSession reads the CLI session of argv (the backend's own:
// --session-id for a new CLI session, --resume to continue one) and
// returns what to carry in and out of the run; nil when the turn has no
// coagent8 session. A resume without usable kept state refuses
// (fault.SessionInvalid, [ReasonSessionStateMissing] and the others).
func (l *ReadLauncher) prepareSession(args []string) (*keptSession, error) {
	l.mu.Lock()
	handle := l.sess.handle
	l.mu.Unlock()
	id, resume := cliSession(args)
	if handle == "" || id == "" {
		return nil, nil
	}
	k := &keptSession{l: l, st: sessionState{dir: sessionDir(l.r.stateDir, handle), handle: handle, cliSession: id}}
	var out sandbox.ScratchFile
	var err error
	if resume {
		var in sandbox.ScratchFile
		if in, err = k.st.load(); err != nil {
			return nil, err
		}
		k.in = []sandbox.ScratchFile{in}
		out, err = k.st.out()
	} else {
		out, err = k.st.begin()
	}
	if err != nil {
		return nil, err
	}
	k.out = []sandbox.ScratchFile{out}
	return k, nil
}

// cliSession is the session id of Claude Code's argv and whether it is a
// --resume; "" when argv names none or not a UUID.
func cliSession(args []string) (string, bool) {
	for i := 0; i+1 < len(args); i++ {
		if (args[i] == "--resume" || args[i] == "--session-id") && adapter.IsUUID(args[i+1]) {
			return args[i+1], args[i] == "--resume"
		}
	}
	return "", false
}

// finish keeps the carried-out transcript after a clean run; after any
// other run the state kept before it stands (its partial turn is not
// what the session answered). A state that cannot be written leaves the
// session not continuable ([ReadLauncher.SessionKept] false).
func (k *keptSession) finish(clean bool) {
	if k == nil {
		return
	}
	defer os.Remove(k.out[0].Host)
	if !clean {
		return
	}
	kept, err := k.st.commit(k.out[0])
	k.l.mu.Lock()
	k.l.sess.kept = kept && err == nil
	k.l.mu.Unlock()
}
