package delegation

import (
	"fmt"
	"runtime"
	"slices"

	"github.com/coagent8/coagent8/internal/sandbox"
)

// ClaudeTools is the candidate profile's exact tool list, as Claude Code's
// system/init reports it (sorted).
var ClaudeTools = []string{"Bash", "Edit", "Glob", "Grep", "Read", "Write"}

// ClaudePermissionMode is the candidate profile's permission mode: with
// the tools allowlisted, dontAsk runs Bash; acceptEdits denies it and
// bypassPermissions refuses uid 0 (notes/delegation.md §1).
const ClaudePermissionMode = "dontAsk"

// ClaudeVersion is the pinned Claude Code version the profile is verified
// against.
const ClaudeVersion = "2.1.328"

// Paths inside the sandbox: HOME is the sandbox's scratch directory (it
// exists and is the job's, writable, removed with the job root); Claude
// Code creates its config dir there.
const (
	insideHome   = "/job/scratch"
	insideConfig = "/job/scratch/.claude"
)

// claudeArgs is the fixed argv after the executable: headless stream
// output, the candidate tools allowlisted, file tools confined to the
// workspace (--restricted), hooks off, no MCP server, the approved model,
// the prompt last.
func claudeArgs(model, prompt string) []string {
	tools := "Read,Edit,Write,Bash,Glob,Grep"
	return []string{"-p", "--output-format", "stream-json", "--verbose", "--model", model,
		"--restricted", "--tools", tools, "--allowedTools", tools, "--permission-mode", ClaudePermissionMode,
		"--settings", `{"disableAllHooks":true}`, "--strict-mcp-config", "--mcp-config", `{"mcpServers":{}}`,
		"--", prompt}
}

// claudeEnv is the allowlisted environment besides the sandbox's base
// (PATH, HOME, TMPDIR, LANG): the shell Claude Code requires, a job-scoped
// config dir, the gate as base URL, no traffic but model requests.
func claudeEnv(gatePort int) []string {
	return []string{"HOME=" + insideHome, "CLAUDE_CONFIG_DIR=" + insideConfig, "SHELL=/bin/bash",
		fmt.Sprintf("ANTHROPIC_BASE_URL=http://127.0.0.1:%d", gatePort),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1"}
}

// caCerts are bound read-only when present (an HTTPS gate would need
// them; the loopback gate is plain HTTP).
var caCerts = []string{"/etc/ssl/certs"}

// claudeSpec is the sandbox spec of one Claude Code candidate job.
func claudeSpec(j Job, port int) sandbox.AgentSpec {
	binds := append([]string{j.Runtime.Executable}, existing(caCerts)...)
	spec := sandbox.AgentSpec{GatePort: port, Candidate: &sandbox.Candidate{Workspace: j.Workspace, Dir: j.CandidateDir, Seeded: j.Seeded},
		Phantom: []string{PhantomVar(j.Gate) + "=" + j.Phantom.Reveal()}}
	spec.Path, spec.Args = j.Runtime.Executable, claudeArgs(j.Model, j.Prompt)
	spec.Env, spec.ReadOnly = claudeEnv(port), binds
	spec.Limits = jobLimits(j.Limits)
	return spec
}

// jobLimits are a candidate job's limits: l, with 2 GiB of memory (a
// Bun runtime or Codex and their children) and a CPU quota of the host's
// cores where l leaves them unset. The quota is the host's, as the CLI
// gets unsandboxed: the profile confines the agent, it does not ration it
// (the sandbox's 1-core default made a short Claude Code job ~50 %
// slower than the same CLI on the host, docs/PERFORMANCE.md).
func jobLimits(l sandbox.Limits) sandbox.Limits {
	if l.Memory == 0 {
		l.Memory = 2 << 30
	}
	if l.CPU == 0 {
		l.CPU = int64(runtime.NumCPU()) * 1000
	}
	return l
}

func existing(paths []string) []string {
	return slices.DeleteFunc(slices.Clone(paths), func(p string) bool { return !exists(p) })
}
