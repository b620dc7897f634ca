package turn

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/coagent8/coagent8/internal/fault"
)

// ConsultInput is the caller's consultation request (contract.md §1).
type ConsultInput struct {
	Proposal          string
	TaskType          string // architecture | debug | implementation | ""
	ContextFiles      []string
	SpecificQuestions string
}

var taskHeaders = map[string]string{
	"":               "[TASK: CONSULTATION]",
	"architecture":   "[TASK: ARCHITECTURE REVIEW]",
	"debug":          "[TASK: DEBUGGING]",
	"implementation": "[TASK: IMPLEMENTATION PLANNING]",
}

// ValidTaskType reports whether t is a known task_type.
func ValidTaskType(t string) bool { _, ok := taskHeaders[t]; return ok }

// ConsultPrompt builds the prompt text (contract.md §1): a task header,
// the proposal, the questions and the target file names (names only: the
// backend reads files itself under its read-only profile).
func ConsultPrompt(in ConsultInput) string {
	var b strings.Builder
	b.WriteString(taskHeaders[in.TaskType])
	b.WriteString("\nYou are consulted read-only: do not modify files. Answer concisely.\n\nPROPOSAL / SPECIFICATION:\n")
	b.WriteString(in.Proposal)
	if q := strings.TrimSpace(in.SpecificQuestions); q != "" {
		b.WriteString("\n\nQUESTIONS / FOCUS:\n")
		b.WriteString(q)
	}
	if len(in.ContextFiles) > 0 {
		b.WriteString("\n\nTarget files:\n")
		for _, f := range in.ContextFiles {
			b.WriteString("- ")
			b.WriteString(filepath.ToSlash(f))
			b.WriteString("\n")
		}
	}
	return b.String()
}

// ContextFile checks one context file name (context_files, file_paths,
// --file): only the name goes into the prompt and the backend reads the
// file itself, so it must be a path inside the workspace, relative to it,
// without ".." — an absolute or escaping name would point the backend
// outside the workspace it was given.
func ContextFile(f string) error {
	msg := ""
	switch {
	case f == "":
		msg = "a context file name is empty"
	case filepath.IsAbs(f) || strings.HasPrefix(f, "/") || strings.HasPrefix(f, `\`):
		msg = fmt.Sprintf("context file %q: give the path relative to the workspace, not an absolute path", f)
	case !filepath.IsLocal(f) || slices.Contains(strings.Split(filepath.ToSlash(f), "/"), ".."):
		msg = fmt.Sprintf("context file %q: give the path inside the workspace without '..'", f)
	default:
		return nil
	}
	return fault.New(fault.InvalidInput, "context_file.invalid", msg)
}
