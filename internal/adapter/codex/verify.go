package codex

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/coagent8/coagent8/internal/fault"
)

// Refusal reasons (SANDBOX_UNAVAILABLE), asserted by tests.
const (
	ReasonThreadPolicy = "codex.thread_policy"
	ReasonMCPEnabled   = "codex.mcp_enabled"
	ReasonHooks        = "codex.hooks"         // a hook ran: features not off
)

// verifyThread checks the CLI's own report of a started or resumed thread
// legacy sandbox policy readOnly without network, approval policy
// exactly "never", a thread id, and the requested working directory. A
// missing field is a refusal, not a default.
func verifyThread(r threadResult, cwd string) error {
	switch {
	case r.Sandbox == nil:
		return policyRefusal("no sandbox policy was reported")
	case r.Sandbox.Type != "readOnly":
		return policyRefusal(fmt.Sprintf("sandbox %q, want readOnly", clip(r.Sandbox.Type, 40)))
	case !bytes.Equal(bytes.TrimSpace(r.Sandbox.NetworkAccess), []byte("false")):
		return policyRefusal("network access is not reported off")
	case !bytes.Equal(bytes.TrimSpace(r.ApprovalPolicy), []byte(`"never"`)):
		return policyRefusal(fmt.Sprintf("approval policy %s, want \"never\"", clip(string(r.ApprovalPolicy), 60)))
	case r.Thread.ID == "":
		return policyRefusal("no thread id was reported")
	case r.Cwd != cwd:
		return policyRefusal("the thread runs in another directory than the workspace")
	}
	return nil
}

func policyRefusal(why string) error {
	return fault.New(fault.SandboxUnavailable, ReasonThreadPolicy,
		"Codex's thread report did not match the read-only profile ("+why+"); the turn was refused and the process ended.")
}

// verifyMCP checks the MCP status report: every configured server
// is listed and "disabled", and no listed server is in any other state
// (a server coagent8 did not know about, e.g. from a plugin, counts too).
// reported maps name → runtimeStatus ("" for null).
func verifyMCP(reported map[string]string, configured []string) error {
	var bad []string
	for _, name := range configured {
		st, ok := reported[name]
		if !ok {
			bad = append(bad, clip(name, 40)+"=missing")
		} else if st != "disabled" {
			bad = append(bad, clip(name, 40)+"="+statusName(st))
		}
	}
	for name, st := range reported {
		if st != "disabled" && !contains(configured, name) {
			bad = append(bad, clip(name, 40)+"="+statusName(st))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fault.New(fault.SandboxUnavailable, ReasonMCPEnabled,
		"Codex did not report every configured MCP server as disabled ("+strings.Join(bad, ", ")+
			"); the turn was refused and the process ended.")
}

func statusName(s string) string {
	if s == "" {
		return "unreported"
	}
	return clip(s, 30)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// clip cuts s to n bytes at a rune boundary (for messages only).
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}
