package sandbox

import (
	"slices"
	"sort"
	"strings"
)

// Paths inside the sandbox. The job root's children are disjoint (notes
// §1: workspace, scratch, artifacts are strict children of one job root).
const (
	insideWorkspace = "/job/workspace"
	insideScratch   = "/job/scratch"
	insideArtifacts = "/job/artifacts"
	insidePath      = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
)

// baseEnv is the whole environment a child gets unless the caller adds
// entries: the host environment never reaches the child.
func baseEnv() map[string]string {
	return map[string]string{
		"PATH":   insidePath,
		"HOME":   insideScratch,
		"TMPDIR": "/tmp",
		"LANG":   "C.UTF-8",
	}
}

// credentialNames are provider and forge credentials that are always
// removed, even when the trusted caller lists them (seed 001 CDP "known
// provider credential variables denied"; notes test 13).
var credentialNames = map[string]bool{
	"ANTHROPIC_API_KEY": true, "ANTHROPIC_AUTH_TOKEN": true, "CLAUDE_CODE_OAUTH_TOKEN": true,
	"OPENAI_API_KEY": true, "CODEX_API_KEY": true, "AZURE_OPENAI_API_KEY": true,
	"GEMINI_API_KEY": true, "GOOGLE_API_KEY": true, "GOOGLE_APPLICATION_CREDENTIALS": true,
	"OPENROUTER_API_KEY": true, "MISTRAL_API_KEY": true, "GROQ_API_KEY": true,
	"XAI_API_KEY": true, "DEEPSEEK_API_KEY": true, "HF_TOKEN": true,
	"GITHUB_TOKEN": true, "GH_TOKEN": true, "GITLAB_TOKEN": true, "NPM_TOKEN": true,
}

// hookNames change how a program loads code or reaches the host; an
// allowlist must not admit them by accident (notes §6: nono's denylist
// missed GIT_SSH_COMMAND, PAGER, EDITOR).
var hookNames = map[string]bool{
	"BASH_ENV": true, "ENV": true, "NODE_OPTIONS": true, "GIT_SSH_COMMAND": true,
	"GIT_SSH": true, "GIT_ASKPASS": true, "SSH_ASKPASS": true, "SSH_AUTH_SOCK": true,
	"DBUS_SESSION_BUS_ADDRESS": true, "XDG_RUNTIME_DIR": true, "PAGER": true,
	"EDITOR": true, "VISUAL": true, "PYTHONSTARTUP": true, "PERL5OPT": true,
	"RUBYOPT": true, "PROMPT_COMMAND": true, "GIT_CONFIG_GLOBAL": true,
}

// envName reports whether s matches ^[A-Za-z_][A-Za-z0-9_]*$. Checked by
// hand: a regexp in a package variable compiles at every process start,
// this helper's included (issue 8 performance); env_test.go checks the
// equivalence.
func envName(s string) bool {
	if s == "" || '0' <= s[0] && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// deniedEnvName reports whether name is removed whatever the caller says.
func deniedEnvName(name string) bool {
	u := strings.ToUpper(name)
	if credentialNames[u] || hookNames[u] {
		return true
	}
	for _, p := range []string{"LD_", "AWS_", "COAGENT8_", "DYLD_"} {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	for _, s := range []string{"_API_KEY", "_TOKEN", "_SECRET", "_PASSWORD", "_CREDENTIALS"} {
		if strings.HasSuffix(u, s) {
			return true
		}
	}
	return strings.Contains(u, "SECRET")
}

// buildEnv returns the child's environment (sorted KEY=VALUE) and the names
// removed from extra. A malformed entry is an input error.
func buildEnv(extra []string) (env, removed []string, err error) {
	m := baseEnv()
	for _, kv := range extra {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !envName(k) || strings.IndexByte(v, 0) >= 0 {
			return nil, nil, invalid("sandbox.env", "environment entries must be NAME=VALUE")
		}
		if len(kv) > maxArgLen {
			return nil, nil, invalid("sandbox.env", "environment entry too long")
		}
		if deniedEnvName(k) {
			removed = append(removed, k)
			continue
		}
		m[k] = v
	}
	for k, v := range m {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	sort.Strings(removed)
	return env, removed, nil
}

// RemovedEnv returns the names among extra (NAME=VALUE entries, as
// [Spec.Env]) that a run removes as credential names, sorted; a
// malformed entry is left to the run's own refusal.
func RemovedEnv(extra []string) []string {
	_, removed, _ := buildEnv(extra)
	return slices.Compact(removed) // sorted: a name given twice is said once
}

// envNames returns the names of env entries (for receipts: names, never
// values).
func envNames(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		out = append(out, k)
	}
	return out
}
