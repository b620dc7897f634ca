package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/providertest"
)

// TestDelegateAgentLogRedacted: a delegate job's stored agent
// transcript (<state>/jobs/JOB/agent.stdout, Claude Code's stream-json
// with every tool result) passes diagnostic redaction. The agent's shell
// prints a synthetic GitHub token it found; the job's agent.stdout holds
// the command's output with the token's marker, never the token. Before,
// the transcript was written as the CLI printed it.
func TestDelegateAgentLogRedacted(t *testing.T) {
	token := "ghp_" + strings.Repeat("R", 18) + "agentlog" + strings.Repeat("7", 10)
	half := token[:len(token)/2]
	cmd := "printf 'found %s%s\\n' " + half + " " + token[len(half):]
	double := providertest.NewAnthropicTools(t, providertest.Options{Default: providertest.Reply{Text: "DONE"}},
		providertest.ToolUse{Name: "Bash", Input: map[string]any{"command": cmd, "description": "look"}})
	probe := providertest.NewAnthropic(t, providertest.Options{})
	environ := delegateEnv(t, probe.URL(), double.URL(), "")
	ws := gitWorkspace(t)
	var asked []string
	cs := connectElicit(t, environ, approving(&asked))
	sc, res := callDelegate(t, cs, map[string]any{"task": "Look around.", "workspace_path": ws, "backend": "claude",
		"model": delegateModel, "budget": map[string]any{"max_usd": 3, "max_minutes": 5}})
	if res.IsError {
		t.Fatalf("delegate = %v", sc)
	}
	id := sc["job"].(string)
	sc = pollJob(t, cs, ws, id)
	out, err := os.ReadFile(filepath.Join(homeOf(environ), ".coagent8", "jobs", id, "agent.stdout"))
	if err != nil {
		t.Fatalf("job %v: %v", sc["state"], err)
	}
	if !strings.Contains(string(out), "found [REDACTED:") {
		t.Errorf("agent.stdout has no redacted command output (job %v):\n%s", sc["state"], out)
	}
	for _, name := range []string{"agent.stdout", "agent.stderr"} {
		b, _ := os.ReadFile(filepath.Join(homeOf(environ), ".coagent8", "jobs", id, name))
		if strings.Contains(string(b), token) {
			t.Errorf("%s holds the synthetic token unredacted", name)
		}
	}
}
