package delegation

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/sandbox"
)

// Qualification binds a runtime to this host's candidate profile (issue
// 15 scope 5): the executable's path, SHA-256 and file key, the version
// it reported when run inside the candidate profile with the gate as its
// only network, and the sandbox receipt of that run (coagent8's binary
// digest, policy digest, kernel release and Landlock ABI).
type Qualification struct {
	Executable   string    `json:"executable"`
	Digest       string    `json:"digest"`
	FileKey      string    `json:"file_key"`
	Version      string    `json:"version"`
	BinaryDigest string    `json:"binary_digest"`
	PolicyDigest string    `json:"policy_digest"`
	Kernel       string    `json:"kernel_release"`
	LandlockABI  int       `json:"landlock_abi"`
	Time         time.Time `json:"time"`
	Passed       bool      `json:"passed"`
	// Detail says why a record did not pass.
	Detail string `json:"detail,omitempty"`
}

// Runner runs delegated jobs on one sandbox, admitting only qualified
// runtimes. It is safe for concurrent use.
type Runner struct {
	sb       *sandbox.Sandbox
	stateDir string
}

// NewRunner returns a Runner over sb whose runtime qualification records
// live in stateDir/delegation (stateDir absolute: config.Env.StateDir()).
func NewRunner(sb *sandbox.Sandbox, stateDir string) (*Runner, error) {
	if sb == nil || !filepath.IsAbs(stateDir) {
		return nil, fault.New(fault.InvalidInput, "delegation.config", "a delegation runner needs a sandbox and an absolute state directory")
	}
	return &Runner{sb: sb, stateDir: stateDir}, nil
}

func (r *Runner) recordPath(executable string) string {
	h := sha256.Sum256([]byte(executable))
	return filepath.Join(r.stateDir, "delegation", "runtime-"+hex.EncodeToString(h[:12])+".json")
}

// Qualify hashes rt's executable, runs it with --version inside the
// candidate profile (an empty workspace; the gate channel served by a
// handler that must see nothing) and stores the record, passed or not.
// It refuses (fault.SandboxUnavailable) when the sandbox cannot run.
func (r *Runner) Qualify(ctx context.Context, rt Runtime) (Qualification, error) {
	digest, key, err := digestKey(rt.Executable)
	if err != nil {
		return Qualification{}, unqualified("a readable runtime executable", err)
	}
	q := Qualification{Executable: rt.Executable, Digest: digest, FileKey: key, Time: time.Now().UTC()}
	// The version run is pinned to the content just digested: what
	// printed the version is what the record binds.
	measured := rt
	measured.Digest, measured.key = digest, key
	rec, version, err := r.runVersion(ctx, measured)
	if err != nil {
		return Qualification{}, err
	}
	q.Version, q.BinaryDigest, q.PolicyDigest = version, rec.BinaryDigest, rec.PolicyDigest
	q.Kernel, q.LandlockABI = rec.Kernel.Release, rec.Kernel.LandlockABI
	switch {
	case digest != rt.Digest:
		q.Detail = "the executable changed since it was resolved"
	case !pinnedVersion(rt, version):
		q.Detail = fmt.Sprintf("version %q inside the sandbox, want %s", version, wantVersion(rt))
	default:
		q.Passed = true
	}
	return q, storeJSON(r.recordPath(rt.Executable), q)
}

// pinnedVersion reports whether version, as rt's --version printed it
// ("2.1.328 (Claude Code)", "codex-cli 0.169.0"), is the pinned one.
func pinnedVersion(rt Runtime, version string) bool {
	if rt.IsCodex() {
		return version == "codex-cli "+CodexVersion
	}
	return strings.HasPrefix(version, ClaudeVersion+" ")
}

func wantVersion(rt Runtime) string {
	if rt.IsCodex() {
		return CodexVersion
	}
	return ClaudeVersion
}

// jobSpec is the sandbox spec of rt's candidate job, its executable
// pinned to j.Runtime.Digest (runtimePin).
func jobSpec(j Job, port int) sandbox.AgentSpec {
	var spec sandbox.AgentSpec
	if j.Runtime.IsCodex() {
		spec = codexSpec(j, port)
	} else {
		spec = claudeSpec(j, port)
	}
	spec.Pinned = []sandbox.Pin{runtimePin(j.Runtime)}
	return spec
}

// runVersion runs `<executable> --version` in the candidate profile.
func (r *Runner) runVersion(ctx context.Context, rt Runtime) (sandbox.Receipt, string, error) {
	ws, err := os.MkdirTemp("/var/tmp", "coagent8-qualify-ws-")
	if err != nil {
		return sandbox.Receipt{}, "", unqualified("a scratch workspace for qualification", err)
	}
	defer os.RemoveAll(ws)
	dir, err := os.MkdirTemp("/var/tmp", "coagent8-qualify-cand-")
	if err != nil {
		return sandbox.Receipt{}, "", unqualified("a scratch workspace for qualification", err)
	}
	defer os.RemoveAll(dir)
	var seen atomic.Int64
	var out bytes.Buffer
	spec := jobSpec(Job{Runtime: rt, Workspace: ws, CandidateDir: dir}, sandbox.DefaultGatePort)
	spec.Args, spec.Phantom, spec.Stdout = []string{"--version"}, nil, &out
	spec.Gate = func(ln net.Listener) {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			seen.Add(1)
			c.Close()
		}
	}
	rec, err := r.sb.RunAgent(ctx, spec)
	if err != nil {
		return rec, "", err
	}
	if !rec.Exit.Success() || seen.Load() != 0 {
		return rec, "", unqualified(fmt.Sprintf("a runtime that prints its version offline (exit %s, %d gate connections)",
			rec.Exit.Class, seen.Load()), nil)
	}
	return rec, strings.TrimSpace(out.String()), nil
}

// requireQualified admits rt only when a passing record binds its
// executable's current content: the file key recorded at qualification
// (no write since) or, when the key changed, a fresh SHA-256 equal to the
// qualified one; and rt's own digest equals it too.
func (r *Runner) requireQualified(rt Runtime) (Qualification, error) {
	var q Qualification
	b, err := os.ReadFile(r.recordPath(rt.Executable))
	if err == nil {
		err = json.Unmarshal(b, &q)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return q, unqualified("a qualification of this runtime (run Qualify)", nil)
	case err != nil:
		return q, unqualified("a readable runtime qualification record", err)
	case !q.Passed:
		return q, unqualified("a passing runtime qualification ("+q.Detail+")", nil)
	case rt.Digest != q.Digest:
		return q, digestErr(rt.Digest, q.Digest)
	}
	key, err := fileKey(rt.Executable)
	if err != nil {
		return q, unqualified("a readable runtime executable", err)
	}
	if key == q.FileKey {
		return q, nil
	}
	d, err := fileDigest(rt.Executable)
	if err != nil {
		return q, unqualified("a readable runtime executable", err)
	}
	if d != q.Digest {
		return q, digestErr(d, q.Digest)
	}
	return q, nil
}

func digestErr(got, want string) error {
	return fault.New(fault.SandboxUnavailable, "delegation.runtime_digest",
		"the delegated CLI's executable is not the qualified one (sha256 "+short(got)+", qualified "+short(want)+"); qualify it again").
		With("digest", got).With("qualified", want)
}

func short(d string) string {
	d = strings.TrimPrefix(d, "sha256:")
	return d[:min(12, len(d))]
}

func unqualified(missing string, cause error) error {
	return fault.Wrap(fault.SandboxUnavailable, "delegation.runtime_unqualified",
		"the delegated runtime is not qualified on this host: missing "+missing, cause).With("missing", missing)
}

// storeJSON writes v atomically, mode 0600 under a 0700 directory.
func storeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return unqualified("a writable state directory", err)
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return unqualified("a writable state directory", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return unqualified("a writable state directory", err)
	}
	return nil
}
