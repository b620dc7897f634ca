package codex

import (
	"sort"
)

// DisabledFeatures are the Codex feature flags switched off for every
// session: connectors/apps, plugins, remote plugins, browser use,
// in-app browser, computer use, hooks and subagents. Names are those of
// `codex features list` in the pinned 0.169.0 (notes/backends.md §1.1);
// this is the one place the list lives — diff it against `codex features
// list` on every upgrade. A name the CLI does not know is ignored by it,
// so a renamed feature would silently stay on: the upgrade check is the
// guard, not this list.
var DisabledFeatures = []string{
	"apps",                 // connectors
	"plugins",              // local plugins
	"remote_plugin",        // remote plugins
	"plugin_sharing",       // plugin install/share flows
	"browser_use",          // browser tool
	"browser_use_external", // external browser tool
	"in_app_browser",       // in-app browser
	"computer_use",         // computer use
	"hooks",                // lifecycle hooks run commands
	"multi_agent",          // subagents (v1)
	"multi_agent_v2",       // subagents (v2)
	"skill_mcp_dependency_install",
	"tool_suggest",
	"image_generation",
}

// appServerArgs is the fixed argv of `codex app-server` (R-005, R-006,
// Nothing from a caller reaches it: servers are names
// read from the user's own Codex configuration, used only as keys.
func appServerArgs(servers []string) []string {
	args := []string{"app-server",
		"-c", `sandbox_mode="read-only"`,
		"-c", `approval_policy="never"`,
	}
	for _, f := range DisabledFeatures {
		args = append(args, "-c", "features."+f+"=false")
	}
	for _, s := range servers {
		if bareKey(s) {
			args = append(args, "-c", "mcp_servers."+s+".enabled=false")
		}
	}
	return args
}

// threadConfig is the `config` object of thread/start and thread/resume.
// It repeats the process overrides because a thread config layer replaces
// the CLI's -c layer for the keys it names (verified with 0.169.0: a
// thread config naming one MCP server re-enabled another disabled by -c),
// and it is the only way to disable a server whose name is not a bare key.
func threadConfig(servers []string) map[string]any {
	features := map[string]any{}
	for _, f := range DisabledFeatures {
		features[f] = false
	}
	mcp := map[string]any{}
	for _, s := range servers {
		mcp[s] = map[string]any{"enabled": false}
	}
	return map[string]any{
		"sandbox_mode":    "read-only",
		"approval_policy": "never",
		"features":        features,
		"mcp_servers":     mcp,
	}
}

// union returns the sorted distinct names of both lists.
func union(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range append(append([]string(nil), a...), b...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}
