package delegation

import (
	"fmt"

	"github.com/coagent8/coagent8/internal/sandbox"
)

// CodexVersion is the pinned Codex version.
const CodexVersion = "0.169.0"

// codexArgs is the fixed argv of a Codex candidate job: `codex exec` with
// the gate as its only provider, and Codex's own sandbox off. Codex's
// sandbox needs nested user namespaces, which this boundary denies: its
// commands would all fail while its thread still reported
// workspaceWrite (notes/delegation.md §3), so the only profile whose
// report is true inside the boundary is danger-full-access, with this
// sandbox as the containment.
func codexArgs(model, prompt string, port int) []string {
	return []string{"exec", "--json", "--skip-git-repo-check", "--sandbox", "danger-full-access",
		"-c", "model_provider=gate", "-c", `model_providers.gate.name="coagent8 gate"`,
		"-c", fmt.Sprintf(`model_providers.gate.base_url="http://127.0.0.1:%d/v1"`, port),
		"-c", `model_providers.gate.env_key="OPENAI_API_KEY"`, "-c", `model_providers.gate.wire_api="responses"`,
		"-m", model, "--", prompt}
}

// codexSpec is the sandbox spec of one Codex candidate job: HOME (and
// so CODEX_HOME, ~/.codex) under scratch, never under /tmp (Codex refuses
// helper binaries there).
func codexSpec(j Job, port int) sandbox.AgentSpec {
	spec := sandbox.AgentSpec{GatePort: port, Candidate: &sandbox.Candidate{Workspace: j.Workspace, Dir: j.CandidateDir},
		Phantom: []string{"OPENAI_API_KEY=" + j.Phantom.Reveal()}}
	spec.Path, spec.Args = j.Runtime.Executable, codexArgs(j.Model, j.Prompt, port)
	spec.Env = []string{"HOME=" + insideHome, "SHELL=/bin/bash"}
	spec.ReadOnly = append([]string{j.Runtime.Executable}, existing(caCerts)...)
	spec.Limits = j.Limits
	if spec.Limits.Memory == 0 {
		spec.Limits.Memory = 2 << 30
	}
	return spec
}
