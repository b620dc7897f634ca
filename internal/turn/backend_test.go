package turn

import (
	"os"
	"path/filepath"
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
