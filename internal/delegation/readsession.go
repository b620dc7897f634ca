package delegation

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/sandbox"
)

// MaxSessionTranscript bounds the Claude Code session transcript kept for
// a read-profile session (16 MiB): a consult conversation, never a data
// set. A transcript over it is not kept, and the session cannot continue.
const MaxSessionTranscript = 16 << 20

// Reasons of a read-profile session whose kept CLI state cannot be given
// back (fault.SessionInvalid): never a silent fresh session.
const (
	ReasonSessionStateMissing   = "delegation.session_state_missing"
	ReasonSessionStateCorrupt   = "delegation.session_state_corrupt"
	ReasonSessionStateOversized = "delegation.session_state_oversized"
)

// insideProjects is where Claude Code keeps the sessions of cwd
// /job/workspace beneath its config dir (/job/scratch/.claude): the
// project slug is the cwd with every non-alphanumeric byte a '-'
// (notes/delegation.md "Files on a fresh home").
const insideProjects = ".claude/projects/-job-workspace/"

// sessionRecord is state.json of a kept read-profile session: which CLI
// session the transcript beside it belongs to and its digest. It and the
// transcript are untrusted bytes (the transcript was written inside the
// sandbox): only handed back to the CLI, never parsed for authority.
type sessionRecord struct {
	Version    int    `json:"version"`
	Handle     string `json:"handle"`
	CLISession string `json:"cli_session"`
	SHA256     string `json:"transcript_sha256,omitempty"`
	Bytes      int64  `json:"transcript_bytes,omitempty"`
	// Dropped says why no transcript was kept after the last turn.
	Dropped string `json:"dropped,omitempty"`
}

// SessionStateDir is where the read-profile state of the coagent8
// session handle is kept: stateDir/delegation/sessions/<the first 16
// bytes of the handle's SHA-256, hex> (the handle is the caller's
// string, its digest a safe file name), holding state.json and
// transcript.jsonl, both 0600.
func SessionStateDir(stateDir, handle string) string { return sessionDir(stateDir, handle) }

func sessionDir(stateDir, handle string) string {
	h := sha256.Sum256([]byte(handle))
	return filepath.Join(stateDir, "delegation", "sessions", hex.EncodeToString(h[:16]))
}

// HasSessionState reports whether the coagent8 session handle has
// read-profile state under stateDir: its first turn ran in the kernel
// read profile, so it continues there. Anything at the path, even
// unreadable, counts: the launcher then names what is wrong with it,
// rather than the turn running on the host without its CLI session.
func HasSessionState(stateDir, handle string) bool {
	_, err := os.Lstat(sessionDir(stateDir, handle))
	return handle != "" && !errors.Is(err, fs.ErrNotExist)
}

// RemoveSessionState removes the read-profile state kept under handle
// (a closed session never continues, and its transcript holds the
// conversation); none is not an error.
func RemoveSessionState(stateDir, handle string) error {
	if handle == "" {
		return nil
	}
	return os.RemoveAll(sessionDir(stateDir, handle))
}

// sessionState is one launch's view of a handle's kept state.
type sessionState struct {
	dir, handle, cliSession string
}

func (s sessionState) recordPath() string     { return filepath.Join(s.dir, "state.json") }
func (s sessionState) transcriptPath() string { return filepath.Join(s.dir, "transcript.jsonl") }

// inside is the transcript's path beneath /job/scratch.
func (s sessionState) inside() string { return insideProjects + s.cliSession + ".jsonl" }

// begin records that handle's CLI session cliSession starts in the read
// profile (a new CLI session replaces a kept one) and returns the file
// the run's transcript is carried out to.
func (s sessionState) begin() (sandbox.ScratchFile, error) {
	pruneSessions(filepath.Dir(s.dir), time.Now().Add(-sessionStateTTL))
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return sandbox.ScratchFile{}, stateErr(fault.ProcessError, "delegation.session_state", "cannot create the session state directory "+s.dir, err)
	}
	os.Remove(s.transcriptPath())
	if err := s.write(sessionRecord{Version: 1, Handle: s.handle, CLISession: s.cliSession, Dropped: "the first turn has not ended"}); err != nil {
		return sandbox.ScratchFile{}, err
	}
	return s.out()
}

// sessionStateTTL is how long kept state outlives its session's last
// turn: a coagent8 session idle for 2 hours cannot be continued
// (session.DefaultIdleTTL), so state untouched for a day is garbage.
const sessionStateTTL = 24 * time.Hour

// pruneSessions removes the kept state of sessions whose record was
// last written before cutoff (each new read-profile session prunes, so
// the directory stays bounded by the sessions of one day).
func pruneSessions(dir string, cutoff time.Time) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		fi, err := os.Lstat(filepath.Join(dir, e.Name(), "state.json"))
		if err == nil && fi.ModTime().Before(cutoff) {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// out is the carry-out of this run's transcript into a fresh file.
func (s sessionState) out() (sandbox.ScratchFile, error) {
	b := make([]byte, 8)
	rand.Read(b)
	host := filepath.Join(s.dir, "transcript.new-"+hex.EncodeToString(b))
	return sandbox.ScratchFile{Rel: s.inside(), Host: host, Max: MaxSessionTranscript}, nil
}

// load checks the kept state of a --resume of cliSession and returns it
// as the file carried into the run. Errors: fault.SessionInvalid with
// [ReasonSessionStateMissing], [ReasonSessionStateCorrupt] or
// [ReasonSessionStateOversized], naming the file.
func (s sessionState) load() (sandbox.ScratchFile, error) {
	rec, err := s.read()
	if err != nil {
		return sandbox.ScratchFile{}, err
	}
	switch {
	case rec.Version != 1 || rec.Handle != s.handle || !adapter.IsUUID(rec.CLISession):
		return sandbox.ScratchFile{}, s.corrupt(s.recordPath(), "is not this session's record")
	case rec.CLISession != s.cliSession:
		return sandbox.ScratchFile{}, s.corrupt(s.recordPath(), "keeps CLI session "+rec.CLISession+", not the one the session continues ("+s.cliSession+")")
	case rec.SHA256 == "":
		return sandbox.ScratchFile{}, stateErr(fault.SessionInvalid, ReasonSessionStateMissing,
			"the read-profile session's CLI transcript was not kept ("+rec.Dropped+"); it cannot be continued: start a new session", nil)
	}
	if err := s.verify(rec); err != nil {
		return sandbox.ScratchFile{}, err
	}
	return sandbox.ScratchFile{Rel: s.inside(), Host: s.transcriptPath(), Max: MaxSessionTranscript}, nil
}

// read reads state.json (at most 4 KiB, a regular owner-only file).
func (s sessionState) read() (sessionRecord, error) {
	b, err := readOwnerOnly(s.recordPath(), 4<<10)
	if err != nil {
		return sessionRecord{}, s.fileErr(s.recordPath(), err)
	}
	var rec sessionRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return sessionRecord{}, s.corrupt(s.recordPath(), "is not valid JSON")
	}
	return rec, nil
}

// verify checks the transcript against the record: size, then digest.
func (s sessionState) verify(rec sessionRecord) error {
	p := s.transcriptPath()
	b, err := readOwnerOnly(p, MaxSessionTranscript)
	if err != nil {
		return s.fileErr(p, err)
	}
	sum := sha256.Sum256(b)
	if int64(len(b)) != rec.Bytes || hex.EncodeToString(sum[:]) != rec.SHA256 {
		return s.corrupt(p, "does not match the digest recorded after the session's last turn (changed on disk)")
	}
	return nil
}

// commit keeps the transcript the run carried out to out.Host (a clean
// run) and reports whether there was one; a missing or oversized one is
// recorded as dropped.
func (s sessionState) commit(out sandbox.ScratchFile) (bool, error) {
	b, err := os.ReadFile(out.Host)
	if err != nil {
		return false, s.write(sessionRecord{Version: 1, Handle: s.handle, CLISession: s.cliSession,
			Dropped: "the CLI left no session transcript of at most " + strconv.Itoa(MaxSessionTranscript>>20) + " MiB"})
	}
	if err := os.Rename(out.Host, s.transcriptPath()); err != nil {
		return false, stateErr(fault.ProcessError, "delegation.session_state", "cannot keep the session transcript in "+s.dir, err)
	}
	sum := sha256.Sum256(b)
	return true, s.write(sessionRecord{Version: 1, Handle: s.handle, CLISession: s.cliSession,
		SHA256: hex.EncodeToString(sum[:]), Bytes: int64(len(b))})
}

// write replaces state.json atomically (0600).
func (s sessionState) write(rec sessionRecord) error {
	b, _ := json.Marshal(rec)
	tmp := s.recordPath() + ".tmp"
	os.Remove(tmp)
	err := os.WriteFile(tmp, b, 0o600)
	if err == nil {
		err = os.Rename(tmp, s.recordPath())
	}
	if err != nil {
		return stateErr(fault.ProcessError, "delegation.session_state", "cannot write the session state "+s.recordPath(), err)
	}
	return nil
}

// errOversized and errNotOwnerOnly are readOwnerOnly's refusals.
var (
	errOversized    = errors.New("oversized")
	errNotOwnerOnly = errors.New("not an owner-only regular file")
)

// readOwnerOnly reads p, a regular file (not followed if a symlink, not
// waited on if a FIFO) of mode 0600 or stricter, of at most max bytes.
func readOwnerOnly(p string, max int64) ([]byte, error) {
	// O_NONBLOCK: a FIFO at p would block the open, and the turn, until
	// a writer came; it is refused below as not a regular file.
	f, err := os.OpenFile(p, os.O_RDONLY|oNoFollow|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0:
		return nil, errNotOwnerOnly
	case fi.Size() > max:
		return nil, errOversized
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(b)) > max {
		err = errOversized
	}
	return b, err
}

// fileErr names what is wrong with a kept file.
func (s sessionState) fileErr(p string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return stateErr(fault.SessionInvalid, ReasonSessionStateMissing,
			"the read-profile session's kept CLI state "+p+" is missing; the session cannot be continued: start a new session", err)
	case errors.Is(err, errOversized):
		return stateErr(fault.SessionInvalid, ReasonSessionStateOversized,
			"the read-profile session's kept CLI state "+p+" is over "+strconv.Itoa(MaxSessionTranscript>>20)+" MiB; it is not given back", err)
	}
	return s.corrupt(p, "cannot be used: "+err.Error())
}

func (s sessionState) corrupt(p, why string) error {
	return stateErr(fault.SessionInvalid, ReasonSessionStateCorrupt,
		"the read-profile session's kept CLI state "+p+" "+why+"; it is not given back", nil)
}

func stateErr(code fault.Code, reason, msg string, cause error) error {
	if cause == nil {
		return fault.New(code, reason, msg)
	}
	return fault.Wrap(code, reason, msg, cause)
}
