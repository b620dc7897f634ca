package agy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/coagent8/coagent8/internal/config"
)

// Inherited is an MCP server or plugin agy would load, by name, with the
// file or directory that declares it (home shown as "~").
type Inherited struct {
	Name   string `json:"name"`
	Source string `json:"source"`
}

// Inheritance is what agy inherits from its configuration. Names
// only: server commands, arguments and environment are never read out.
type Inheritance struct {
	MCPServers []Inherited `json:"mcpServers"`
	Plugins    []Inherited `json:"plugins"`
	// Unreadable lists configuration files that exist but could not be
	// parsed: what they declare is unknown, not absent.
	Unreadable []string `json:"unreadable,omitempty"`
}

// mcpFiles are the JSON files (relative to the config dir) whose
// "mcpServers" object agy or the Gemini CLI it grew from reads.
var mcpFiles = []string{"settings.json", "mcp_config.json", "config/mcp_config.json", "antigravity/mcp_config.json"}

// pluginDirs hold one subdirectory per installed plugin or extension.
var pluginDirs = []string{"extensions", "plugins", "antigravity/plugins", "antigravity-cli/plugins"}

// configDir is <GEMINI_CLI_HOME or home>/.gemini (backends.md §3).
func configDir(env config.Env) string {
	home := env.Get("GEMINI_CLI_HOME")
	if home == "" {
		home = env.Home()
	}
	return filepath.Join(home, ".gemini")
}

// Discover lists the MCP servers and plugins agy would inherit from the
// user configuration and, if workspace is not "", from the workspace's
// .gemini directory. It reads files only; it never starts agy.
func Discover(env config.Env, workspace string) Inheritance {
	var inh Inheritance
	dirs := []string{configDir(env)}
	if workspace != "" {
		dirs = append(dirs, filepath.Join(workspace, ".gemini"))
	}
	for _, dir := range dirs {
		for _, rel := range mcpFiles {
			inh.readServers(env, filepath.Join(dir, filepath.FromSlash(rel)), "")
		}
		for _, rel := range pluginDirs {
			inh.readPlugins(env, filepath.Join(dir, filepath.FromSlash(rel)))
		}
	}
	return inh
}

func (inh *Inheritance) readServers(env config.Env, path, via string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	var doc struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if json.Unmarshal(stripComments(b), &doc) != nil {
		inh.Unreadable = append(inh.Unreadable, tilde(env, path))
		return
	}
	src := tilde(env, path) + via
	for _, name := range sortedNames(doc.MCPServers) {
		inh.MCPServers = append(inh.MCPServers, Inherited{Name: clean(name), Source: src})
	}
}

// readPlugins lists each subdirectory as a plugin, plus the MCP servers its
// manifest declares (Gemini CLI extensions can bundle servers).
func (inh *Inheritance) readPlugins(env config.Env, dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		inh.Plugins = append(inh.Plugins, Inherited{Name: clean(e.Name()), Source: tilde(env, dir)})
		for _, manifest := range []string{"gemini-extension.json", "plugin.json"} {
			inh.readServers(env, filepath.Join(dir, e.Name(), manifest), " (plugin "+clean(e.Name())+")")
		}
	}
}

// Lines renders the inheritance for doctor and Probe.Limitations.
func (inh Inheritance) Lines() []string {
	out := []string{
		"inherited MCP servers: " + names(inh.MCPServers),
		"inherited plugins: " + names(inh.Plugins),
	}
	if len(inh.Unreadable) > 0 {
		out = append(out, "unreadable agy configuration (what it declares is unknown): "+strings.Join(inh.Unreadable, ", "))
	}
	return out
}

func names(list []Inherited) string {
	if len(list) == 0 {
		return "none found"
	}
	parts := make([]string, len(list))
	for i, it := range list {
		parts[i] = fmt.Sprintf("%s (%s)", it.Name, it.Source)
	}
	return strings.Join(parts, ", ")
}

func sortedNames(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// clean bounds a user-chosen name and drops control characters.
func clean(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return s
}

// tilde shows a path under the home directory as "~/…".
func tilde(env config.Env, p string) string {
	home := env.Home()
	if home == "" || home == "/" {
		return p
	}
	if rel, err := filepath.Rel(home, p); err == nil && !strings.HasPrefix(rel, "..") {
		return "~" + string(filepath.Separator) + rel
	}
	return p
}

// stripComments removes // and /* */ comments outside strings (settings
// files are JSON with comments).
func stripComments(b []byte) []byte {
	out := make([]byte, 0, len(b))
	inStr, esc := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inStr:
			out = append(out, c)
			esc, inStr = c == '\\' && !esc, !(c == '"' && !esc) && inStr
		case c == '"':
			inStr = true
			out = append(out, c)
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
			out = append(out, '\n')
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			end := strings.Index(string(b[i+2:]), "*/")
			if end < 0 {
				return out
			}
			i += end + 3
		default:
			out = append(out, c)
		}
	}
	return out
}
