package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/coagent8/coagent8/internal/clitest"
	"github.com/coagent8/coagent8/internal/providertest"
)

// Exit statuses of the Inspector CLI (@modelcontextprotocol/inspector
// 2.12.0, pinned in scripts/install.sh): 0 a result, 5 a tool result with
// isError true, 1 a failure, such as a result the Inspector rejected
// against the tool's outputSchema ("data must NOT have additional
// properties"), 6 a tool schema error under --strict.
const (
	inspectorOK        = 0
	inspectorToolError = 5
)

// inspect runs the pinned Inspector CLI against the built binary with the
// server environment environ and returns its stdout and exit status.
func inspect(t *testing.T, environ []string, args ...string) ([]byte, int) {
	t.Helper()
	out, _, code := inspectStderr(t, environ, args...)
	return out, code
}

// inspectStderr is inspect that also returns the Inspector's stderr
// (where --strict reports schema findings).
func inspectStderr(t *testing.T, environ []string, args ...string) ([]byte, []byte, int) {
	t.Helper()
	cli := []string{"--cli"}
	for _, kv := range environ {
		cli = append(cli, "-e", kv)
	}
	cli = append(cli, args...)
	cli = append(cli, "--format", "json", binary, "serve")
	cmd := exec.Command(clitest.Path(t, "mcp-inspector"), cli...)
	// The Inspector's own catalog and storage go to a temporary home.
	cmd.Env = []string{"PATH=" + filepath.Dir(nodePath(t)) + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + t.TempDir()}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.Bytes(), stderr.Bytes(), 0
	case errors.As(err, &exit):
		if exit.ExitCode() != inspectorToolError {
			t.Logf("inspector %v: exit %d\nstdout: %s\nstderr: %s", args, exit.ExitCode(), stdout.Bytes(), stderr.Bytes())
		}
		return stdout.Bytes(), stderr.Bytes(), exit.ExitCode()
	}
	t.Fatalf("inspector: %v\n%s", err, stderr.Bytes())
	return nil, nil, 0
}

// nodePath is the node the pinned CLIs run on; a missing node fails.
func nodePath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is required for the Inspector CLI (scripts/install.sh): %v", err)
	}
	return p
}

// TestProtocolInspectorAcceptsEveryResult runs the official MCP Inspector
// CLI against the built server in both profiles: tools/list (with
// --strict: no schema finding at all, not even a warning: it warned
// about each nullable field's type ["null", T]) and tools/call of every
// listed tool with its success and error paths (the Inspector calls only
// listed tools; the unlisted aliases are checked against consult's
// schema in TestProtocolEveryResultMeetsItsOutputSchema). The Inspector
// validates each result against the tool's outputSchema and exits 1 when
// it rejects one, as it did for cancel's error results (issue 19 item 2).
func TestProtocolInspectorAcceptsEveryResult(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: "Answer from the double."}})
	for _, profile := range []string{"canonical", "compact"} {
		t.Run(profile, func(t *testing.T) {
			inspectEveryTool(t, env(t, dbl.URL(), "COAGENT8_TOOL_PROFILE="+profile))
		})
	}
}

func inspectEveryTool(t *testing.T, environ []string) {
	out, stderr, code := inspectStderr(t, environ, "--method", "tools/list", "--strict")
	if bytes.Contains(stderr, []byte("Warning: tool")) || bytes.Contains(stderr, []byte("Error: tool")) {
		t.Errorf("tools/list --strict reports schema findings:\n%s", stderr)
	}
	var list struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &list); code != inspectorOK || err != nil || len(list.Result.Tools) < 4 {
		t.Fatalf("tools/list: exit %d, %v: %s", code, err, out)
	}
	listed := map[string]bool{}
	for _, tl := range list.Result.Tools {
		listed[tl.Name] = false
	}
	ws := t.TempDir()
	for _, tc := range resultCases(ws) {
		if _, ok := listed[tc.tool]; !ok {
			continue
		}
		t.Run(tc.tool+" "+tc.wantErr, func(t *testing.T) {
			args, _ := json.Marshal(tc.args)
			out, code := inspect(t, environ, "--method", "tools/call", "--tool-name", tc.tool, "--tool-args-json", string(args))
			want := inspectorOK
			if tc.wantErr != "" {
				want = inspectorToolError
			}
			var res struct {
				Result *struct {
					IsError bool `json:"isError"`
				} `json:"result"`
				Error any `json:"error"`
			}
			if err := json.Unmarshal(out, &res); err != nil || code != want || res.Result == nil || res.Error != nil {
				t.Fatalf("tools/call %s %s: exit %d (want %d), %v: %s", tc.tool, args, code, want, err, out)
			}
		})
		listed[tc.tool] = true
	}
	for name, called := range listed {
		if !called {
			t.Errorf("listed tool %s was not called through the Inspector", name)
		}
	}
}
