package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/turn"
)

// The consult flags accept what the MCP consult tool's input schema
// accepts (internal/mcpserver consultSchema), so a terminal user learns
// the same limits an agent does.
var (
	sessionModes = []string{"new", "auto", "none"}
	efforts      = []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}
	taskTypes    = []string{"architecture", "debug", "implementation"}
)

// Timeout bounds of --timeout (the tool's timeout_ms: 100..1,800,000).
const (
	minConsultTimeout = 100 * time.Millisecond
	maxConsultTimeout = 30 * time.Minute
)

// validate checks the flags alone (no file system, no backend), so a bad
// flag is reported before the workspace and the backend are looked at; a
// bad one is a usage error (flag.invalid).
func (o *consultOptions) validate() error {
	switch {
	case !slices.Contains(sessionModes, o.mode):
		return badUsage("flag.invalid", "--session-mode %q: use %s", o.mode, orList(sessionModes))
	case o.taskType != "" && !turn.ValidTaskType(o.taskType):
		return badUsage("flag.invalid", "--task-type %q: use %s, or omit it", o.taskType, orList(taskTypes))
	case o.effort != "" && adapter.ValidEffort(o.effort) != nil:
		return badUsage("flag.invalid", "--effort %q: use %s", o.effort, orList(efforts))
	case o.timeout != 0 && (o.timeout < minConsultTimeout || o.timeout > maxConsultTimeout):
		return badUsage("flag.invalid", "--timeout %s: use 100ms to 30m, or 0 for the default (15m)", o.timeout)
	}
	for _, f := range o.files {
		if err := contextFile(f); err != nil {
			return err
		}
	}
	return nil
}

// contextFile checks one --file: only its name is sent and the backend
// reads it from the workspace, so it must be a path inside the workspace,
// given relative to it.
func contextFile(f string) error {
	if f == "" {
		return badUsage("flag.invalid", "--file is empty")
	}
	if err := turn.ContextFile(f); err != nil {
		// Same rule as the MCP tool's context_files; name the flag.
		return badUsage("flag.invalid", "%s", strings.Replace(fault.From(err).Message, "context file ", "--file ", 1))
	}
	return nil
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// consultWorkspace resolves --workspace for the terminal: empty means the current
// directory and a relative path is taken from it; [turn.Workspace] then
// requires an existing directory.
func (a *app) consultWorkspace(dir string) (string, error) {
	if dir == "" {
		dir = a.cwd()
	} else if !filepath.IsAbs(dir) {
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
	}
	return turn.Workspace(dir)
}
