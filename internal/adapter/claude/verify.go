package claude

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/coagent8/coagent8/internal/fault"
)

// wantTools is the exact tool set of the read-only profile. A strict
// subset is refused too: it signals an unexpected CLI change (R-012
// proposal).
var wantTools = []string{"Glob", "Grep", "Read"}

// verifyInit checks the CLI's own startup report. It is the only
// path to st.verified = true.
func (st *turnState) verifyInit(ev event) error {
	if ev.Type != "system" || ev.Subtype != "init" {
		return refusal("the first event was not the startup report")
	}
	if got := sortedCopy(ev.Tools); !slices.Equal(got, wantTools) {
		return refusal(fmt.Sprintf("tools %v, want exactly %v", got, wantTools))
	}
	if m := bytes.TrimSpace(ev.MCPServers); !bytes.Equal(m, []byte("[]")) {
		return refusal("MCP servers were reported")
	}
	if ev.Mode == nil || *ev.Mode != "dontAsk" {
		return refusal("permission mode is not dontAsk")
	}
	for _, p := range ev.Plugins {
		if p.Path != "builtin" {
			return refusal(fmt.Sprintf("non-built-in plugin %q is loaded", truncate(p.Name, 60)))
		}
	}
	if err := supported(ev.Version); err != nil {
		return err
	}
	if ev.SessionID != st.inv.sessionID {
		return fault.New(fault.ProtocolError, "claude.session_mismatch",
			"Claude Code reported a different session than requested.")
	}
	if st.check != nil {
		if err := st.check(ev.Model); err != nil {
			return err
		}
	}
	st.verified = true
	st.res.Model = ev.Model
	st.res.Verified = fmt.Sprintf("claude.startup_report: tools=[%s] mcp_servers=[] permissionMode=dontAsk version=%s",
		strings.Join(wantTools, ","), truncate(ev.Version, 32))
	return nil
}

// refusal is the fail-closed verification error (SANDBOX_UNAVAILABLE).
func refusal(why string) error {
	return fault.New(fault.SandboxUnavailable, "claude.startup_report",
		"Claude Code's startup report did not match the read-only profile ("+why+"); the turn was refused and the process ended.")
}
