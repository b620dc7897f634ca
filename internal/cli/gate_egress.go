package cli

import (
	"context"
	"os"
	"os/user"
	"path/filepath"
	"slices"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/egress"
	"github.com/coagent8/coagent8/internal/egress/ledger"
	"github.com/coagent8/coagent8/internal/egress/lineage"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/evidence"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gate"
	"github.com/coagent8/coagent8/internal/store"
)

// egressDecider builds the decider of `coagent8 gate serve` (issue 10):
// the policy of config.json's "egress" section or [egress.DefaultConfig],
// lineage over workspace when a label names paths, the disclosure ledger
// on the gate's database, the evidence key at <state>/evidence.key and
// the gate's event sink. Any problem refuses: the gate never serves
// without a decider.
func (a *app) egressDecider(ctx context.Context, db *store.DB, events event.Sink, workspace string) (*egress.Decider, string, error) {
	pol, source, err := a.egressPolicy()
	if err != nil {
		return nil, "", err
	}
	src, err := lineageOf(pol, workspace)
	if err != nil {
		return nil, "", err
	}
	led, err := ledger.Open(ctx, db, nil)
	if err != nil {
		return nil, "", err
	}
	key, err := evidence.LoadKey(filepath.Join(a.env.StateDir(), "evidence.key"))
	if err != nil {
		return nil, "", err
	}
	d, err := egress.New(egress.Options{Policy: pol, Lineage: src, Ledger: led, Key: key, Events: events,
		Principal: principal()})
	return d, source, err
}

// egressPolicy returns the validated policy and where it came from
// ("config" or "built-in"). Problems with other keys of config.json do not
// concern the gate; an unreadable file or a bad "egress" section refuses.
func (a *app) egressPolicy() (*egress.Policy, string, error) {
	f, _ := config.LoadFile(a.env.ConfigPath())
	raw, err := f.Egress()
	if fe := fault.From(err); fe != nil && fe.Reason == "config.literal_credential" {
		return nil, "", err // names the key holding the literal
	}
	if err != nil {
		return nil, "", egressConfigErr("the configuration file cannot be read, so its egress policy is unknown", err)
	}
	c, source := egress.DefaultConfig(), "built-in"
	if raw != nil {
		if c, err = egress.ParseConfig(raw); err != nil {
			return nil, "", egressConfigErr(err.Error(), err)
		}
		source = "config"
	}
	pol, err := egress.NewPolicy(c)
	if err != nil {
		return nil, "", egressConfigErr(fault.From(err).Message, err)
	}
	return pol, source, nil
}

func egressConfigErr(problem string, cause error) error {
	return fault.Wrap(fault.InvalidInput, "egress.config",
		`config.json key "egress": `+problem+"; the gate does not start without a valid egress policy", cause).
		With("key", "egress")
}

// lineageOf returns the workspace index the policy's path labels need,
// or nil when no label names paths (then lineage is never consulted).
// Lineage is checked once here so a broken workspace refuses to start
// instead of refusing every request.
func lineageOf(pol *egress.Policy, workspace string) (egress.LineageSource, error) {
	globs := pol.PathGlobs()
	if !slices.ContainsFunc(globs, func(g []string) bool { return len(g) > 0 }) {
		return nil, nil
	}
	bad := func(msg string, cause error) error {
		return fault.Wrap(fault.InvalidInput, "egress.workspace", msg, cause).With("flag", "--workspace")
	}
	if workspace == "" {
		return nil, bad("the egress policy labels workspace paths: give --workspace DIR (the agent's working tree)", nil)
	}
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return nil, bad("--workspace: not a usable path", err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return nil, bad("--workspace: not a directory", err)
	}
	ws, err := lineage.NewWorkspace(abs, globs)
	if err == nil {
		_, err = ws.Current()
	}
	if err != nil {
		return nil, bad("--workspace: the labelled files cannot be indexed (lineage unknown)", err)
	}
	return ws, nil
}

// principal names the local operator subject; the decider keeps only its
// digest.
func principal() string {
	if u, err := user.Current(); err == nil {
		return "local:" + u.Uid
	}
	return "local"
}

// refuseEgress is the decider of the gate subcommands that never serve
// HTTP (grant, inspect, revoke, settle). It refuses every body, so such a
// gate cannot forward undecided bytes even if misused, and revoking or
// settling a grant never depends on the egress configuration being valid.
type refuseEgress struct{}

var _ gate.EgressDecider = refuseEgress{}

func (refuseEgress) Seal(context.Context, egress.Transmission) ([]byte, error) {
	return nil, fault.New(fault.PolicyDenied, egress.ReasonUnavailable, "this gate does not forward requests")
}
