package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestJobsAdmitEscapeAgentNamesOnTerminal: the JSON `coagent8 jobs JOB`
// and `coagent8 admit` print carries the agent's file names (finding
// paths, admitted paths). encoding/json escapes C0 controls but writes a
// C1 control (U+009B is CSI: "\u009b2J" clears the screen) and a bidi
// override (U+202E reorders what the user reads) raw, so the name acted
// on the terminal. They are written as JSON \u escapes: the same data to
// a JSON reader, inert on a terminal.
func TestJobsAdmitEscapeAgentNamesOnTerminal(t *testing.T) {
	env := testEnv(t)
	ws := newWorkspace(t)
	name := ".github/workflows/x\u009b2J\u009b1A\u202elmy.yx\u2066\u200f\u0085\x7f"
	id := seedJob(t, env, ws, name, "on: push\n", "")
	for _, args := range [][]string{{"jobs", id}, {"admit", id, "--workspace", ws}} {
		code, out, errs := runCLI(t, env, "", args...)
		if code != ExitOK {
			t.Fatalf("%s: exit %d %q %q", args[0], code, out, errs)
		}
		for _, r := range []string{"\u009b", "\u202e", "\u2066", "\u200f", "\u0085", "\x7f"} {
			if got, want := strings.Contains(out, r), false; got != want {
				t.Errorf("%s output carries %q raw: got %v, want %v\n%q", args[0], r, got, want, out)
			}
		}
		// The data is unchanged for a JSON reader.
		dec := json.NewDecoder(strings.NewReader(out))
		var v struct {
			Findings []struct{ Path string } `json:"finding_list"`
			Paths    []string                `json:"paths"`
		}
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s: %v\n%s", args[0], err, out)
		}
		got := append(v.Paths, func() (p []string) {
			for _, f := range v.Findings {
				p = append(p, f.Path)
			}
			return
		}()...)
		if len(got) == 0 || got[0] != name {
			t.Errorf("%s: decoded paths = %q, want %q first", args[0], got, name)
		}
	}
}
