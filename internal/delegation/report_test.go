package delegation

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
)

const goodInit = `{"type":"system","subtype":"init","tools":["Read","Write","Edit","Bash","Glob","Grep"],"permissionMode":"dontAsk","mcp_servers":[],"model":"m","claude_code_version":"2.1.328","cwd":"/job/workspace"}`

// TestReportWatch: the first system/init line is verified against the
// candidate profile; ui_invalidate before it passes; anything else before
// it, or a differing report, stops the run with delegation.report.
func TestReportWatch(t *testing.T) {
	for _, c := range []struct {
		name, out string
		stopped   bool
		detail    string // "" = verified
	}{
		{"verified", `{"type":"system","subtype":"ui_invalidate"}` + "\n" + goodInit + "\n" + `{"type":"assistant"}` + "\n", false, ""},
		{"split across writes", goodInit + "\n", false, ""},
		{"extra tool", strings.Replace(goodInit, `"Grep"]`, `"Grep","WebFetch"]`, 1) + "\n", true, "tools"},
		{"permission mode", strings.Replace(goodInit, "dontAsk", "bypassPermissions", 1) + "\n", true, "permission mode"},
		{"mcp server", strings.Replace(goodInit, `"mcp_servers":[]`, `"mcp_servers":[{"name":"x"}]`, 1) + "\n", true, "MCP"},
		{"version", strings.Replace(goodInit, "2.1.328", "2.1.329", 1) + "\n", true, "version"},
		{"model", strings.Replace(goodInit, `"model":"m"`, `"model":"other"`, 1) + "\n", true, "model"},
		{"cwd", strings.Replace(goodInit, "/job/workspace", "/", 1) + "\n", true, "working directory"},
		{"output before init", `{"type":"assistant"}` + "\n" + goodInit + "\n", true, "before system/init"},
		{"no init", `{"type":"system","subtype":"ui_invalidate"}` + "\n", false, "no system/init"},
	} {
		stopped := false
		var fwd bytes.Buffer
		w := newReportWatch(&fwd, "m", func() { stopped = true })
		if c.name == "split across writes" {
			w.Write([]byte(c.out[:17]))
			w.Write([]byte(c.out[17:]))
		} else {
			w.Write([]byte(c.out))
		}
		_, err := w.result()
		var fe *fault.Error
		switch {
		case c.detail == "" && err != nil:
			t.Errorf("%s: %v, want verified", c.name, err)
		case c.detail != "" && (!errors.As(err, &fe) || fe.Reason != "delegation.report" || !strings.Contains(fe.Message, c.detail)):
			t.Errorf("%s: err %v, want delegation.report naming %q", c.name, err, c.detail)
		}
		if stopped != c.stopped || fwd.String() != c.out {
			t.Errorf("%s: stopped %v (want %v), forwarded %d of %d bytes", c.name, stopped, c.stopped, fwd.Len(), len(c.out))
		}
	}
}
