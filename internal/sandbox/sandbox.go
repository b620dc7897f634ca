package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
)

// MinLandlockABI is the hard Landlock floor (ABI 6: abstract-socket and
// signal scopes; notes/sandbox.md §3 step 8). [Config] may raise it, never
// lower it.
const MinLandlockABI = 6

// Config configures a [Sandbox]. Zero values take the documented defaults.
// There is deliberately no field that disables a layer (notes test 20).
type Config struct {
	// StateDir is coagent8's state directory (config.Env.StateDir()).
	// Qualification records live in StateDir/sandbox. Required.
	StateDir string
	// JobsDir holds job roots while they run. It must be a directory the
	// sandbox's unprivileged user can traverse; default
	// /tmp/coagent8-jobs-<euid>, created 0711 and checked to be owned by us.
	JobsDir string
	// MinLandlockABI raises the Landlock floor above [MinLandlockABI]
	// (e.g. to require resolve_unix). A host below it refuses.
	MinLandlockABI int
	// CgroupRoot is where cgroup hierarchies are mounted (default
	// /sys/fs/cgroup).
	CgroupRoot string
	// AutoQualify runs qualification when no passing record matches the
	// current binary, kernel and policy, writing a notice to Notice.
	AutoQualify bool
	// Notice receives human-readable notices (nil discards).
	Notice io.Writer
	// Events, when set, receives security events: refusals, qualification
	// results, each admission and each run's receipt summary (never
	// command output or arguments). When it is set and a record cannot be
	// written, the run is refused (R-197: a missing audit receipt disables
	// execution). Nil records nothing.
	Events event.Sink
}

// Sandbox runs task-sandbox jobs. It is safe for concurrent use.
type Sandbox struct {
	cfg Config

	mu        sync.Mutex
	qualified *Qualification // cached passing record for this process
}

// New validates cfg and returns a Sandbox. It does not touch the host;
// capability checks happen on every run so a host change is noticed.
func New(cfg Config) (*Sandbox, error) {
	if cfg.StateDir == "" || !filepath.IsAbs(cfg.StateDir) {
		return nil, invalid("sandbox.config", "sandbox needs an absolute state directory")
	}
	if cfg.MinLandlockABI == 0 {
		cfg.MinLandlockABI = MinLandlockABI
	}
	if cfg.MinLandlockABI < MinLandlockABI {
		return nil, invalid("sandbox.config", fmt.Sprintf("Landlock ABI floor cannot go below %d", MinLandlockABI))
	}
	if cfg.CgroupRoot == "" {
		cfg.CgroupRoot = "/sys/fs/cgroup"
	}
	if cfg.JobsDir == "" {
		cfg.JobsDir = fmt.Sprintf("/tmp/coagent8-jobs-%d", os.Geteuid())
	}
	for _, p := range []string{cfg.CgroupRoot, cfg.JobsDir} {
		if err := CheckPath(p); err != nil {
			return nil, err
		}
	}
	if cfg.Notice == nil {
		cfg.Notice = io.Discard
	}
	return &Sandbox{cfg: cfg}, nil
}

// Run admits spec, requires a passing qualification for this binary and
// host, and runs the command. The returned error is a *fault.Error:
// fault.InvalidInput for a rejected spec, fault.SandboxUnavailable when a
// boundary cannot be established (nothing ran), fault.Unsupported off
// Linux/amd64. A command that fails, times out or is killed is not an
// error: see Receipt.Exit.
//
// With [Config.Events] set, every refusal, the admission (before the
// command starts) and the receipt are recorded; a failed write refuses
// with fault.SandboxUnavailable reason "audit.sink_unwritable".
// When only the receipt record fails, the command has run: the receipt is
// returned together with that error, and callers must not treat the run
// as verified.
func (s *Sandbox) Run(ctx context.Context, spec Spec) (Receipt, error) {
	j, err := s.admit(spec)
	if err != nil {
		return Receipt{}, s.refuse(err)
	}
	return s.runAdmitted(ctx, j)
}

// runAdmitted runs an admitted job of any profile: qualification, the
// admission record, the run and its receipt record (errors as for Run).
func (s *Sandbox) runAdmitted(ctx context.Context, j job) (Receipt, error) {
	q, err := s.requireQualified(ctx)
	if err != nil {
		return Receipt{}, s.refuse(err)
	}
	j.id = newJobID()
	if err := s.record(admissionEvent(j, q)); err != nil {
		return Receipt{}, err
	}
	rec, err := s.runJob(ctx, j, q.BinaryDigest)
	if err != nil {
		return rec, s.refuse(err)
	}
	return rec, s.record(receiptEvent(rec))
}

func unavailable(reason, missing string, cause error) *fault.Error {
	msg := "the task sandbox is unavailable on this host: " + missing
	return fault.Wrap(fault.SandboxUnavailable, "sandbox."+reason, msg, cause).With("missing", missing)
}
