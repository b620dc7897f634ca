package codex

import (
	"context"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/process"
)

// Name is the backend id.
const Name = "codex"

// Options configure the backend. The zero value is the safe default.
type Options struct {
	// APIKeyBilling lets OPENAI_API_KEY and CODEX_API_KEY (and a custom
	// provider env_key with one of those names) reach the CLI: the user
	// chose API-key billing. Otherwise they are stripped (backends.md §0).
	APIKeyBilling bool
	// Ephemeral starts threads that are never written to disk. Such
	// threads cannot be resumed by a later call (each call runs its own
	// app-server process), so Result.SessionID is then empty. The default
	// (false) writes threads under CODEX_HOME like the user's own Codex
	// sessions, which is what continuation needs.
	Ephemeral bool
	// RPCTimeout bounds each metadata request (initialize, thread/start,
	// status lists; 0 = 60 s). It does not bound the turn itself, which
	// runs under the turn's deadline and idle timeout.
	RPCTimeout time.Duration
}

// Backend runs Codex turns through `codex app-server`, one process per
// turn (a reused process would need re-verification per thread; not done).
// It is safe for concurrent use.
type Backend struct {
	env  config.Env
	opts Options
}

var _ adapter.Backend = (*Backend)(nil)

// New returns a Codex backend that locates the CLI (CODEX_PATH, else
// PATH) and Codex's home (CODEX_HOME, else ~/.codex) through env. It
// returns INVALID_INPUT for a negative RPCTimeout.
func New(env config.Env, opts Options) (*Backend, error) {
	if opts.RPCTimeout < 0 {
		return nil, fault.New(fault.InvalidInput, "codex.options", "codex RPC timeout must not be negative")
	}
	if opts.RPCTimeout == 0 {
		opts.RPCTimeout = 60 * time.Second
	}
	return &Backend{env: env, opts: opts}, nil
}

// Name returns "codex".
func (b *Backend) Name() string { return Name }

// childEnv is the allowlisted environment of the app-server: the base
// list, Codex's own location variables, and the env_key of the user's
// configured model provider — unless that names a provider key the user
// did not opt into (R-017 spirit: nothing widens by default).
func (b *Backend) childEnv(home string, uc userConfig) []string {
	extra := []string{"CODEX_CA_CERTIFICATE", "CODEX_SQLITE_HOME"}
	if b.opts.APIKeyBilling {
		extra = append(extra, "OPENAI_API_KEY", "CODEX_API_KEY")
	}
	if k := uc.EnvKey; envKey(k) && (b.opts.APIKeyBilling || !isProviderKey(k)) {
		extra = append(extra, k)
	}
	// CODEX_HOME is passed only when the user set it: Codex refuses an
	// explicit CODEX_HOME that does not exist yet, while without it Codex
	// uses (and creates) ~/.codex, the same directory codexHome reads.
	set := map[string]string{}
	if _, ok := b.env.Lookup("CODEX_HOME"); ok {
		set["CODEX_HOME"] = home
	}
	return process.Environ(b.env, extra, set)
}

func isProviderKey(k string) bool {
	for _, p := range process.ProviderKeys {
		if p == k {
			return true
		}
	}
	return false
}

// spec is the supervised app-server process for one workspace.
func (b *Backend) spec(path, dir string, uc userConfig, env []string, deadline, idle time.Duration) process.Spec {
	return process.Spec{Path: path, Args: appServerArgs(uc.Servers), Dir: dir, Env: env,
		KeepStdin: true, Deadline: deadline, IdleTimeout: idle}
}

// prepared is what every app-server start needs.
type prepared struct {
	path string
	home string
	uc   userConfig
	env  []string
}

// prepare resolves the CLI and reads the user's configuration; both
// failures refuse before any process starts.
func (b *Backend) prepare() (prepared, error) {
	path, _, err := process.Resolve(b.env, "codex", "CODEX_PATH")
	if err != nil {
		return prepared{}, err
	}
	home := codexHome(b.env)
	uc, err := readUserConfig(b.env, home)
	if err != nil {
		return prepared{}, err
	}
	return prepared{path: path, home: home, uc: uc, env: b.childEnv(home, uc)}, nil
}

// contextFor returns a context for one metadata request.
func (b *Backend) rpcContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, b.opts.RPCTimeout)
}
