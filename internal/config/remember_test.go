package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func decodeAny(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := strictUnmarshal(b, &v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

func TestAddAllowedModelPreservesFile(t *testing.T) {
	before := `{
	"zeta": {"nested": [1, 2.50, "x"]},
	"schemaVersion": 1,
	"governance": {"askAbovePrice": 20.00, "models": {"deny": ["o3"], "allow": ["gpt-5"]}},
	"alpha": null
}`
	p := writeConfig(t, before)
	if runtime.GOOS != "windows" {
		if err := os.Chmod(p, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := AddAllowedModel(p, "claude-sonnet-4-5"); err != nil {
		t.Fatalf("AddAllowedModel: %v", err)
	}
	after, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	want := decodeAny(t, []byte(before))
	want.(map[string]any)["governance"].(map[string]any)["models"].(map[string]any)["allow"] = []any{"gpt-5", "claude-sonnet-4-5"}
	if diff := cmp.Diff(want, decodeAny(t, after)); diff != "" {
		t.Errorf("content changed beyond the allow list (-want +got):\n%s", diff)
	}
	// Key order and number spelling survive.
	top, _ := decodeObject(after)
	var keys []string
	for _, m := range top {
		keys = append(keys, m.key)
	}
	if diff := cmp.Diff([]string{"zeta", "schemaVersion", "governance", "alpha"}, keys); diff != "" {
		t.Errorf("key order (-want +got):\n%s", diff)
	}
	if !json.Valid(after) || !contains(after, "2.50") || !contains(after, "20.00") {
		t.Errorf("numbers respelled:\n%s", after)
	}
	if fi, _ := os.Stat(p); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640", fi.Mode().Perm())
	}
	// The edited file still loads and allows the model.
	f, err := LoadFile(p)
	if err != nil || f.GovernanceErr() != nil {
		t.Fatalf("reload: %v %v", err, f.GovernanceErr())
	}
	if allow, _, _ := f.Governance.Lists(); !cmp.Equal(allow, []string{"gpt-5", "claude-sonnet-4-5"}) {
		t.Errorf("allow = %v", allow)
	}
	// Remembering again changes nothing.
	if err := AddAllowedModel(p, "CLAUDE-SONNET-4-5"); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(p); string(again) != string(after) {
		t.Errorf("a repeated remember rewrote the file")
	}
}

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }

func TestAddAllowedModelCreatesFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "sub", "config.json")
	if err := AddAllowedModel(p, "gpt-x"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	want := map[string]any{"governance": map[string]any{"models": map[string]any{"allow": []any{"gpt-x"}}}}
	if diff := cmp.Diff(any(want), decodeAny(t, b)); diff != "" {
		t.Errorf("new file (-want +got):\n%s", diff)
	}
	if fi, _ := os.Stat(p); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("new file mode = %v", fi.Mode().Perm())
	}
}

func TestAddAllowedModelFollowsSymlink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Log("symlinks need privileges on windows; covered on unix")
		return
	}
	dir := t.TempDir()
	real := filepath.Join(dir, "real.json")
	link := filepath.Join(dir, "config.json")
	if err := os.WriteFile(real, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := AddAllowedModel(link, "m"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("symlink replaced by a file")
	}
	if b, _ := os.ReadFile(real); !contains(b, `"m"`) {
		t.Errorf("target not edited: %s", b)
	}
}

func TestAddAllowedModelRefuses(t *testing.T) {
	for _, tt := range []struct{ body, id string }{
		{`{}`, "--yolo"},
		{`{}`, "a\nb"},
		{`{"governance":{"models":{"allow":"x"}}}`, "m"},
		{`{"governance":{"models":[]}}`, "m"},
		{`{"governance":7}`, "m"},
		{`{"a":1,"a":2}`, "m"},
		{`not json`, "m"},
	} {
		p := writeConfig(t, tt.body)
		if err := AddAllowedModel(p, tt.id); err == nil {
			t.Errorf("AddAllowedModel(%s, %q) succeeded", tt.body, tt.id)
		}
		if b, _ := os.ReadFile(p); string(b) != tt.body {
			t.Errorf("refused write still changed the file: %s", b)
		}
	}
}

// TestAddAllowedModelConcurrent: concurrent remembers never lose an id.
func TestAddAllowedModelConcurrent(t *testing.T) {
	p := writeConfig(t, `{"keep":true}`)
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- AddAllowedModel(p, fmt.Sprintf("model-%02d", i))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("AddAllowedModel: %v", err)
		}
	}
	f, err := LoadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	allow, _, _ := f.Governance.Lists()
	if len(allow) != n {
		t.Errorf("allow has %d ids after %d concurrent remembers: %v", len(allow), n, allow)
	}
}
