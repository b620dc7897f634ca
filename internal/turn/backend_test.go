package turn

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/adapter"
	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/fault"
)

type namedBackend struct {
	countingBackend
	name string
}

func (n *namedBackend) Name() string { return n.name }

// TestAmbiguousBackendNamesTheWayOut (issue 18 item 4): with two CLIs
// installed and no backend named, ONBOARDING_REQUIRED names the
// terminal's --backend and the configuration file it would set
// defaultBackend in.
func TestAmbiguousBackendNamesTheWayOut(t *testing.T) {
	dir := t.TempDir()
	var env []string
	for _, v := range []string{"CLAUDE_PATH", "CODEX_PATH"} {
		p := filepath.Join(dir, v)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o700); err != nil {
			t.Fatal(err)
		}
		env = append(env, v+"="+p)
	}
	cfg := filepath.Join(dir, "conf", "config.json")
	e := config.FromList(append(env, "HOME="+dir, "PATH=/nonexistent", "COAGENT8_CONFIG="+cfg))
	r, err := New(Options{Env: e, Events: &event.Memory{},
		Backends: []adapter.Backend{&namedBackend{name: "claude"}, &namedBackend{name: "codex"}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ResolveBackend(e, "", "", r)
	fe := fault.From(err)
	got := []string{string(fe.Code), fe.Reason, fe.Message}
	want := []string{"ONBOARDING_REQUIRED", "backend.ambiguous",
		"Several backends are installed (claude, codex): name one (the backend argument; --backend in a terminal), or set defaultBackend in ~/conf/config.json."} // home shown as ~: messages hold no home path
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ResolveBackend (-want +got):\n%s", d)
	}
}

// TestNoneInstalledNamesThePathsSearched: with no backend CLI installed
// and none named, CLI_NOT_FOUND backend.none_installed lists the places
// searched per backend, as the refusal of a named backend does (README:
// "CLI_NOT_FOUND (with the paths searched)"), an override variable as
// NAME=value, and carries them all in its "searched" detail.
func TestNoneInstalledNamesThePathsSearched(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	notExec := filepath.Join(a, "claude-copy")
	if err := os.WriteFile(notExec, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		env      []string
		msg      string
		searched []string
	}{
		{"PATH only", []string{"PATH=" + a + ":" + b + ":" + a},
			"No backend CLI is installed: install Claude Code, Codex or agy, or set CLAUDE_PATH / CODEX_PATH / AGY_PATH. Searched: " +
				"claude: " + a + "/claude, " + b + "/claude; codex: " + a + "/codex, " + b + "/codex; agy: " + a + "/agy, " + b + "/agy.",
			[]string{a + "/claude", b + "/claude", a + "/codex", b + "/codex", a + "/agy", b + "/agy"}},
		{"an override", []string{"PATH=" + b, "CLAUDE_PATH=" + notExec},
			"No backend CLI is installed: install Claude Code, Codex or agy, or set CLAUDE_PATH / CODEX_PATH / AGY_PATH. Searched: " +
				"claude: CLAUDE_PATH=" + notExec + "; codex: " + b + "/codex; agy: " + b + "/agy.",
			[]string{"CLAUDE_PATH=" + notExec, b + "/codex", b + "/agy"}},
		{"no PATH", []string{"PATH=relative/bin"},
			"No backend CLI is installed: install Claude Code, Codex or agy, or set CLAUDE_PATH / CODEX_PATH / AGY_PATH. Searched: " +
				"claude: nowhere (PATH names no absolute directory); codex: nowhere (PATH names no absolute directory); agy: nowhere (PATH names no absolute directory).",
			[]string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := config.FromList(append([]string{"HOME=" + t.TempDir()}, tt.env...))
			r, err := New(Options{Env: e, Events: &event.Memory{}, Backends: []adapter.Backend{
				&namedBackend{name: "claude"}, &namedBackend{name: "codex"}, &namedBackend{name: "agy"}}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = ResolveBackend(e, "", "", r)
			fe := fault.From(err)
			got := []any{string(fe.Code), fe.Reason, fe.Message, strings.Split(fe.Details["searched"], string(os.PathListSeparator))}
			want := []any{"CLI_NOT_FOUND", "backend.none_installed", tt.msg, tt.searched}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("ResolveBackend (-want +got):\n%s", d)
			}
		})
	}
}
