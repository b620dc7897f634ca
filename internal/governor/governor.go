package governor

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/crash"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/policy"
	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/turn"
	"github.com/coagent8/coagent8/internal/verify"
)

// modelTTL is how long a probed concrete model id is reused (a probe
// costs a CLI start; AUD-P1-4).
const modelTTL = 10 * time.Minute

// Options configure a [Governor]. Runner, ConfigPath and Events are
// required; the zero values of the others are documented per field.
type Options struct {
	Env config.Env
	// Runner runs the admitted turns.
	Runner *turn.Runner
	// ConfigPath is the user's configuration (config.Env.ConfigPath). It
	// is re-read on every run so edits and "remember" apply.
	ConfigPath string
	// Catalog is the price catalog in force; nil means no price data
	//
	Catalog policy.Catalog
	// Events receives one security event per refusal raised here
	// refusals of consent itself are recorded by the [Consent].
	Events event.Sink
	// DefaultBackend is the user's configured default for backend "auto";
	// "" picks the only installed backend.
	DefaultBackend string
	// Verifier runs the user's review checks (verify.commands) in the task
	// sandbox; nil reports configured checks as not run, never runs them
	// unsandboxed.
	Verifier *verify.Verifier
	// Delegation builds what delegate jobs run on (job store, in-process
	// gate, sandboxed runner), on the first approved job; nil refuses
	// every job with UNSUPPORTED delegate.unavailable.
	Delegation func(context.Context) (DelegateDeps, error)
	// Logger receives the panics recovered in the goroutines the
	// governor starts (jobs, background turns, checks); nil logs them to
	// standard error through the diagnostic redactor.
	Logger *slog.Logger
}

// Governor runs governed turns. It is safe for concurrent use; create one
// per process with [New].
type Governor struct {
	env            config.Env
	runner         *turn.Runner
	configPath     string
	catalog        policy.Catalog
	events         event.Sink
	defaultBackend string
	verifier       *verify.Verifier
	diag           *redact.Redactor
	guard          *crash.Guard // nil: stderr (crash.Guard)
	models         *modelCache

	delegation   func(context.Context) (DelegateDeps, error)
	depsMu       sync.Mutex
	depsOK       bool
	delegateDeps DelegateDeps
	live         live
	kernel       kernelState
}

// New returns a Governor. It fails with PROCESS_ERROR when Runner,
// ConfigPath or Events is missing: a governor without them could not
// refuse, so it is not built.
func New(o Options) (*Governor, error) {
	switch {
	case o.Runner == nil:
		return nil, fault.New(fault.ProcessError, "governor.runner", "governor: runner is required")
	case o.ConfigPath == "":
		return nil, fault.New(fault.ProcessError, "governor.config_path", "governor: configuration path is required")
	case o.Events == nil:
		return nil, fault.New(fault.ProcessError, "governor.events", "governor: event sink is required")
	}
	g := &Governor{env: o.Env, runner: o.Runner, configPath: o.ConfigPath, catalog: o.Catalog, events: o.Events,
		defaultBackend: o.DefaultBackend, verifier: o.Verifier, diag: redact.NewDiagnostic(o.Env.Home()),
		models: newModelCache(modelTTL), delegation: o.Delegation}
	if o.Logger != nil {
		var err error
		if g.guard, err = crash.New(o.Logger, g.diag); err != nil {
			return nil, err
		}
	}
	return g, nil
}
