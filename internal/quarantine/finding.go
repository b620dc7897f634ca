package quarantine

import "fmt"

// Severity says whether a finding taints the candidate.
type Severity uint8

// Severities of a [Finding].
const (
	// Warn: shown to the user; admission does not need an acknowledgement.
	Warn Severity = iota + 1
	// Block: taints the candidate; admission needs the user to acknowledge
	// the taint.
	Block
)

// String returns "warn" or "block"; it panics on any other value.
func (s Severity) String() string {
	switch s {
	case Warn:
		return "warn"
	case Block:
		return "block"
	}
	panic(fmt.Sprintf("quarantine: unknown Severity %d", uint8(s)))
}

// MarshalText encodes the severity by name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText decodes "warn" or "block".
func (s *Severity) UnmarshalText(b []byte) error {
	switch string(b) {
	case "warn":
		*s = Warn
	case "block":
		*s = Block
	default:
		return fmt.Errorf("quarantine: unknown severity %q", b)
	}
	return nil
}

// Rules of a [Finding] (stable, machine-readable).
const (
	RuleOutside       = "path.outside_workspace" // absolute or ".." path
	RuleGitDir        = "path.git_dir"           // a path component ".git" (hooks, config)
	RuleRepoState     = "git.repository_state"   // the candidate's own top-level .git changed (commits, index): warn, never in the patch
	RuleSymlinkEscape = "symlink.escapes"        // target absolute or leaving the tree
	RuleSetuid        = "mode.setuid"            // setuid, setgid or sticky bit
	RuleSpecial       = "file.special"           // device, FIFO or socket
	RuleHook          = "exec.hook"              // hook managers (.githooks, .husky, pre-commit)
	RuleCI            = "exec.ci"                // CI configuration
	RuleAttributes    = "exec.gitattributes"     // .gitattributes filter/diff/merge drivers
	RuleHostExec      = "exec.host"              // files tools run on the host (.envrc, .vscode tasks, devcontainer)
	RuleSubmodules    = "exec.submodules"        // .gitmodules: where `git submodule update` fetches code from
	RuleAgentConfig   = "exec.agent_config"      // a coding agent's project config or instructions (.claude/, .mcp.json, AGENTS.md)
	RuleCredential    = "secret.credential"      // a credential in added content
)

// Finding is one scan result. Path is the workspace-relative path the agent
// chose (untrusted: show it as data); Line is the 1-based line in the
// patch, 0 when the finding is about the whole file. Message never quotes
// added content.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	Path     string   `json:"path"`
	Line     int      `json:"line,omitempty"`
	Message  string   `json:"message"`
}

// Tainted reports whether any finding blocks admission without an
// acknowledgement.
func Tainted(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == Block {
			return true
		}
	}
	return false
}
