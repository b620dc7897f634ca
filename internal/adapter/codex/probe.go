package codex

import (
	"context"
	"os"
	"sort"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/fault"
)

// probeDeadline bounds a whole metadata probe (start, handshake, thread
// start, status list, teardown).
const probeDeadline = 60 * time.Second

// ServerStatus is one configured MCP server as the profile left it.
type ServerStatus struct {
	Name string `json:"name"`
	// Status is Codex's runtimeStatus ("disabled" is the only accepted
	// value; "" means Codex did not report the server).
	Status   string `json:"status"`
	Disabled bool   `json:"disabled"`
}

// Inspection is the doctor's view of the Codex backend, gathered by
// metadata only: no prompt is ever sent.
type Inspection struct {
	Path    string `json:"path"`
	Version string `json:"version"`
	// AuthStatus is authenticated | unauthenticated | unknown, from the
	// CLI's own account/read (never from files: AUD-P2-2).
	AuthStatus  string `json:"authStatus"`
	AuthMethod  string `json:"authMethod,omitempty"`
	AuthDetail  string `json:"authDetail,omitempty"`
	ConfigFile  string `json:"configFile,omitempty"`
	ModelSource string `json:"modelSource,omitempty"`
	// DefaultModel is the model an ephemeral thread reports without a
	// requested model (the concrete default consent must name, R-038).
	DefaultModel string         `json:"defaultModel,omitempty"`
	Servers      []ServerStatus `json:"mcpServers"`
	// Verified is the verification line of the metadata-only thread start,
	// empty when it failed (Error says why).
	Verified string       `json:"verified,omitempty"`
	Error    *fault.Error `json:"-"`
}

// Inspect starts the app-server in dir with the read-only profile, reads
// version, account, effective configuration and model, starts an
// ephemeral thread (no turn) and verifies it and the MCP status. The
// returned error is set only when the CLI could not be found or started;
// verification failures are reported in Inspection.Error.
func (b *Backend) Inspect(ctx context.Context, dir string) (Inspection, error) {
	pr, err := b.prepare()
	if err != nil {
		return Inspection{}, err
	}
	in := Inspection{Path: pr.path, ConfigFile: pr.uc.Path, AuthStatus: "unknown"}
	procCtx, stop := context.WithCancel(ctx)
	defer stop()
	s, err := b.startSession(procCtx, pr, dir, probeDeadline, probeDeadline, newEvents(nil, b.env.Home(), nil))
	if err != nil {
		return in, err
	}
	defer s.p.Kill()
	if err := s.inspect(ctx, dir, pr, &in); err != nil {
		in.Error = fault.From(s.p.Classify(err))
	}
	return in, nil
}

func (s *session) inspect(ctx context.Context, dir string, pr prepared, in *Inspection) error {
	if err := s.handshake(ctx); err != nil {
		in.Version = s.version
		return err
	}
	in.Version = s.version
	s.account(ctx, in)
	servers, _, err := s.effectiveServers(ctx, dir, pr.uc.Servers)
	if err != nil {
		return err
	}
	thread, err := s.openThread(ctx, dir, "", "", servers, true)
	if err != nil {
		return err
	}
	in.DefaultModel, in.ModelSource = thread.Model, "thread/start"
	got, err := s.checkMCP(ctx, thread.Thread.ID, servers)
	in.Servers = serverStatuses(servers, got)
	if err != nil {
		return err
	}
	in.Verified = verifiedLine(len(servers), s.version)
	return nil
}

// account fills the auth fields from account/read; a failure leaves
// "unknown" (doctor still reports the rest).
func (s *session) account(ctx context.Context, in *Inspection) {
	var r accountResult
	if err := s.call(ctx, "account/read", map[string]any{}, &r); err != nil {
		in.AuthDetail = "account/read failed"
		return
	}
	switch {
	case r.Account != nil:
		in.AuthStatus, in.AuthMethod = "authenticated", r.Account.Type
	case r.RequiresOpenaiAuth:
		in.AuthStatus = "unauthenticated"
	default:
		in.AuthDetail = "the configured model provider does not use OpenAI sign-in"
	}
}

func serverStatuses(configured []string, got map[string]string) []ServerStatus {
	out := []ServerStatus{}
	for _, n := range union(configured, keys(got)) {
		st := got[n]
		out = append(out, ServerStatus{Name: n, Status: st, Disabled: st == "disabled"})
	}
	return out
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Probe reports installation, version, auth and default model by
// metadata only (no prompt). It runs in a fresh empty directory so no
// project configuration applies; doctor calls [Backend.Inspect] with the
// workspace for the full picture.
func (b *Backend) Probe(ctx context.Context) adapter.Probe {
	pb := adapter.Probe{Backend: Name, MinVersion: MinVersion, AuthStatus: "unknown"}
	dir, err := os.MkdirTemp("", "coagent8-codex-probe-")
	if err != nil {
		pb.Error = probeError(fault.Wrap(fault.ProcessError, "codex.probe_dir", "could not create a probe directory", err))
		return pb
	}
	defer os.RemoveAll(dir)
	in, err := b.Inspect(ctx, dir)
	if err != nil {
		pb.Error = probeError(fault.From(err))
		pb.Installed = !fault.HasCode(err, fault.CLINotFound)
		return pb
	}
	pb.Installed, pb.Path, pb.Version = true, in.Path, in.Version
	pb.Supported = atLeast(in.Version, MinVersion)
	pb.AuthStatus, pb.AuthMethod, pb.DefaultModel = in.AuthStatus, in.AuthMethod, in.DefaultModel
	if in.AuthDetail != "" {
		pb.AuthEvidence = []string{"account/read: " + in.AuthDetail}
	}
	if in.Error != nil {
		pb.Error = probeError(in.Error)
	}
	return pb
}

func probeError(e *fault.Error) *adapter.ProbeError {
	return &adapter.ProbeError{Code: string(e.Code), Reason: e.Reason, Message: e.Message}
}
