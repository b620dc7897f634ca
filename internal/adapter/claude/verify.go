package claude

import (
	"bytes"
	"encoding/json"
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

// preInitKeys are the only keys of the one event Claude Code may write
// before its startup report: a UI invalidation notice that carries no
// content (seen under load with 2.1.328).
var preInitKeys = map[string]bool{"type": true, "subtype": true, "event": true, "uuid": true, "session_id": true}

// contentFreeNotice reports whether a pre-init record is exactly such a
// notice. Anything else before the report — any other event, any extra
// field — is still a refusal (R-012: content before init refuses).
func contentFreeNotice(rec []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(rec, &m) != nil || string(m["type"]) != `"system"` || string(m["subtype"]) != `"ui_invalidate"` {
		return false
	}
	for k := range m {
		if !preInitKeys[k] {
			return false
		}
	}
	return true
}
