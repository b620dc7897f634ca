package mcpserver

import (
	"fmt"
	"strings"

	"github.com/coagent8/coagent8/internal/verify"
)

// checksText is the short text section listing each check's real result.
func checksText(checks []verify.Check) string {
	if len(checks) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n> Checks (run by coagent8 in the task sandbox):")
	for _, c := range checks {
		fmt.Fprintf(&b, "\n> - `%s` %s", c.Display(), c.Outcome())
		if c.Receipt != nil {
			fmt.Fprintf(&b, " · %.1fs · job %s", c.DurationMS/1000, c.Receipt.JobID)
		}
	}
	return b.String()
}
