package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLoadFileVerify(t *testing.T) {
	p := writeConfig(t, `{"verify":{"commands":[["go","test","./..."],["/usr/bin/make","check"]],
		"timeoutSeconds":120,"memoryMiB":1024,"readOnly":["/opt/toolchain"]}}`)
	f, err := LoadFile(p)
	if err != nil || f.VerifyErr() != nil {
		t.Fatalf("LoadFile: %v / %v", err, f.VerifyErr())
	}
	want := Verify{Commands: [][]string{{"go", "test", "./..."}, {"/usr/bin/make", "check"}},
		Timeout: 120 * time.Second, MemoryMiB: 1024, ReadOnly: []string{"/opt/toolchain"}}
	if d := cmp.Diff(want, f.Verify); d != "" {
		t.Errorf("Verify (-want +got):\n%s", d)
	}
	if f.GovernanceErr() != nil {
		t.Errorf("a verify section disturbs governance: %v", f.GovernanceErr())
	}
}

// TestLoadFileBadVerify: every malformed verify section is refused as a
// whole with an error naming the key; governance is unaffected (the review
// still runs, without checks).
func TestLoadFileBadVerify(t *testing.T) {
	long := strings.Repeat("a", 1025)
	many := "[" + strings.Repeat(`["true"],`, MaxVerifyCommands) + `["true"]]`
	tests := []struct{ body, key string }{
		{`{"verify":[]}`, "verify"},
		{`{"verify":{"command":[["go"]]}}`, "verify.command"},
		{`{"verify":{"commands":"go test ./..."}}`, "verify.commands"},
		{`{"verify":{"commands":[["go",1]]}}`, "verify.commands"},
		{`{"verify":{"commands":` + many + `}}`, "verify.commands"},
		{`{"verify":{"commands":[[]]}}`, "verify.commands[0]"},
		{`{"verify":{"commands":[["true"],["sh -c 'x'"]]}}`, "verify.commands[1]"},
		{`{"verify":{"commands":[["./run-tests"]]}}`, "verify.commands[0]"},
		{`{"verify":{"commands":[["/usr/bin/../bin/go"]]}}`, "verify.commands[0]"},
		{`{"verify":{"commands":[["go","a\nb"]]}}`, "verify.commands[0]"},
		{`{"verify":{"commands":[["go","` + long + `"]]}}`, "verify.commands[0]"},
		{`{"verify":{"timeoutSeconds":0}}`, "verify.timeoutSeconds"},
		{`{"verify":{"timeoutSeconds":1.5}}`, "verify.timeoutSeconds"},
		{`{"verify":{"memoryMiB":"big"}}`, "verify.memoryMiB"},
		{`{"verify":{"memoryMiB":1}}`, "verify.memoryMiB"},
		{`{"verify":{"readOnly":["relative"]}}`, "verify.readOnly[0]"},
		{`{"verify":{"readOnly":["/"]}}`, "verify.readOnly[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			f, err := LoadFile(writeConfig(t, tt.body))
			var ke *KeyError
			if !errors.As(f.VerifyErr(), &ke) || ke.Key != tt.key || err == nil {
				t.Fatalf("%s: VerifyErr = %v (load err %v), want key %s", tt.body, f.VerifyErr(), err, tt.key)
			}
			if f.Verify.Commands != nil || f.GovernanceErr() != nil {
				t.Errorf("invalid section kept %+v / governance %v", f.Verify, f.GovernanceErr())
			}
		})
	}
	if f, _ := LoadFile(writeConfig(t, `{not json`)); f.VerifyErr() == nil {
		t.Error("an unreadable file leaves VerifyErr nil")
	}
}

// TestVerifyResolve: bare names are looked up in PATH (absolute entries
// only) and every program ends canonical (symlinks resolved).
func TestVerifyResolve(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "bin", "tool")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "plain"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "links")
	if err := os.MkdirAll(link, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(link, "tool")); err != nil {
		t.Fatal(err)
	}
	canon, _ := filepath.EvalSymlinks(real)
	env := FromList([]string{"PATH=bin:" + link + ":" + filepath.Join(dir, "bin")})
	v := Verify{Commands: [][]string{{"tool", "a"}, {filepath.Join(link, "tool")}}}
	got, err := v.Resolve(env)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([][]string{{canon, "a"}, {canon}}, got.Commands); d != "" {
		t.Errorf("Resolve (-want +got):\n%s", d)
	}
	for _, name := range []string{"plain", "missing", filepath.Join(dir, "bin", "plain")} {
		_, err := Verify{Commands: [][]string{{"tool"}, {name}}}.Resolve(env)
		var ke *KeyError
		if !errors.As(err, &ke) || ke.Key != "verify.commands[1][0]" {
			t.Errorf("Resolve(%s) = %v, want a KeyError for verify.commands[1][0]", name, err)
		}
	}
	// A relative PATH entry is never used, even from the right directory.
	t.Chdir(dir)
	if _, err := (Verify{Commands: [][]string{{"tool"}}}).Resolve(FromList([]string{"PATH=bin"})); err == nil {
		t.Error("a relative PATH entry resolved a program")
	}
}
