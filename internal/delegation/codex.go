package delegation

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"

	codexcli "github.com/coagent8/coagent8/internal/adapter/codex"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/sandbox"
)

// CodexVersion is the pinned Codex version the candidate profile is
// verified against.
const CodexVersion = "0.169.0"

// The Codex candidate profile (issue 15 scope 4): the exact report
// thread/start must give inside the boundary. Codex's own sandbox needs
// nested user namespaces, which this boundary denies: under
// workspace-write its commands all fail while its thread still reports
// workspaceWrite and the turn "completes" (notes/delegation.md §3). The
// only profile whose report is true inside the boundary is
// danger-full-access with approval never, and the kernel sandbox around
// the process is the containment.
const (
	CodexSandbox        = "dangerFullAccess" // thread/start result sandbox.type
	CodexApprovalPolicy = "never"
	// CodexModelProvider is the one provider Codex is configured with:
	// the gate behind the sandbox's only network channel.
	CodexModelProvider = "gate"
)

// codexArgs is the fixed argv of a Codex candidate job: `codex
// app-server` (its thread report is what is verified; `codex exec`
// reports no sandbox) with the gate as its only provider, Codex's own
// sandbox off, approvals never, and every tool feature that could reach
// beyond the sandbox's shell off (connectors, plugins, browser, hooks,
// subagents: the list the read-only consult disables).
func codexArgs(port int) []string {
	args := []string{"app-server",
		"-c", `sandbox_mode="danger-full-access"`, "-c", `approval_policy="never"`, "-c", `web_search="disabled"`}
	for _, f := range codexcli.DisabledFeatures {
		args = append(args, "-c", "features."+f+"=false")
	}
	return append(args, "-c", `model_provider="`+CodexModelProvider+`"`,
		"-c", `model_providers.gate.name="coagent8 gate"`,
		"-c", fmt.Sprintf(`model_providers.gate.base_url="http://127.0.0.1:%d/v1"`, port),
		"-c", `model_providers.gate.env_key="OPENAI_API_KEY"`, "-c", `model_providers.gate.wire_api="responses"`)
}

// codexThreadConfig is thread/start's config layer: it repeats the
// process overrides because a thread layer replaces the -c layer for the
// keys it names (verified for the read-only consult, adapter/codex).
func codexThreadConfig() map[string]any {
	features := map[string]any{}
	for _, f := range codexcli.DisabledFeatures {
		features[f] = false
	}
	return map[string]any{"sandbox_mode": "danger-full-access", "approval_policy": CodexApprovalPolicy, "web_search": "disabled", "features": features}
}

// codexSpec is the sandbox spec of one Codex candidate job: HOME (and
// so CODEX_HOME, ~/.codex) under scratch, never under /tmp (Codex
// refuses helper binaries there).
func codexSpec(j Job, port int) sandbox.AgentSpec {
	spec := sandbox.AgentSpec{GatePort: port, Candidate: &sandbox.Candidate{Workspace: j.Workspace, Dir: j.CandidateDir, Seeded: j.Seeded},
		Phantom: []string{"OPENAI_API_KEY=" + j.Phantom.Reveal()}}
	spec.Path, spec.Args = j.Runtime.Executable, codexArgs(port)
	spec.Env = []string{"HOME=" + insideHome, "SHELL=/bin/bash"} // CODEX_HOME defaults to HOME/.codex, created by Codex; a set CODEX_HOME must exist
	spec.ReadOnly = append([]string{j.Runtime.Executable}, existing(caCerts)...)
	spec.Limits = jobLimits(j.Limits)
	return spec
}

// codexVendor is where @openai/codex's launcher finds its native binary:
// the platform package's vendor/<triple>/bin/codex, a static-pie
// executable (notes/delegation.md §4).
var codexVendor = map[string][2]string{
	"amd64": {"codex-linux-x64", "x86_64-unknown-linux-musl"},
	"arm64": {"codex-linux-arm64", "aarch64-unknown-linux-musl"},
}

// ResolveCodexRuntime resolves path — the pinned Codex's npm launcher
// (node_modules/.bin/codex → @openai/codex/bin/codex.js) or its native
// binary itself — to the native binary, which the sandbox executes
// directly (no node in the sandbox: the launcher only execs it), and
// digests it. The native binary is the only executable Codex runs of its
// own: its helpers (codex-linux-sandbox, apply_patch) are itself under
// another argv[0], and its bundled ripgrep and bwrap are not bound.
// Errors are fault.CLINotFound.
func ResolveCodexRuntime(path string) (Runtime, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return Runtime{}, fault.Wrap(fault.CLINotFound, "delegation.runtime", "the Codex CLI was not found", err)
	}
	if !isELF(real) {
		v, ok := codexVendor[goruntime.GOARCH]
		pkg := filepath.Dir(filepath.Dir(real)) // …/@openai/codex
		var found bool
		for _, base := range []string{filepath.Join(pkg, "node_modules", "@openai"), filepath.Dir(pkg)} {
			p := filepath.Join(base, v[0], "vendor", v[1], "bin", "codex")
			if ok && isELF(p) {
				real, found = p, true
				break
			}
		}
		if !found {
			return Runtime{}, fault.New(fault.CLINotFound, "delegation.runtime",
				"the Codex CLI's native binary was not found next to its launcher "+real+" (reinstall @openai/codex "+CodexVersion+")")
		}
	}
	rt, err := ResolveRuntime(real)
	rt.Backend = BackendCodex
	return rt, err
}

func isELF(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, 4)
	_, err = f.Read(b)
	return err == nil && bytes.Equal(b, []byte("\x7fELF"))
}
