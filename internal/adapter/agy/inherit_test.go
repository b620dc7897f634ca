package agy

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/config"
)

func config0() config.Env { return config.FromList([]string{"HOME=/nonexistent-home"}) }

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestDoctorNamesInheritedServersAndPlugins is R-058: a fake agy
// configuration with servers x, y and plugin p.
func TestDoctorNamesInheritedServersAndPlugins(t *testing.T) {
	home := t.TempDir()
	token := "API_TOKEN=abc" + strings.Repeat("9", 30)
	write(t, filepath.Join(home, ".gemini", "settings.json"), `{
  // user settings (JSON with comments)
  "mcpServers": {"x": {"command": "srv", "env": {"T": "`+token+`"}}},
  "theme": "dark /* not a comment */"
}`)
	write(t, filepath.Join(home, ".gemini", "antigravity", "mcp_config.json"), `{"mcpServers": {"y": {"url": "http://127.0.0.1:1"}}}`)
	write(t, filepath.Join(home, ".gemini", "extensions", "p", "gemini-extension.json"), `{"name":"p","mcpServers":{"z":{"command":"z"}}}`)
	write(t, filepath.Join(home, ".gemini", "mcp_config.json"), `{not json`)
	env := config.FromList([]string{"HOME=" + home})

	d := New(env, Options{}).Doctor(context.Background(), "")
	want := Inheritance{
		MCPServers: []Inherited{
			{Name: "x", Source: "~/.gemini/settings.json"},
			{Name: "y", Source: "~/.gemini/antigravity/mcp_config.json"},
			{Name: "z", Source: "~/.gemini/extensions/p/gemini-extension.json (plugin p)"},
		},
		Plugins:    []Inherited{{Name: "p", Source: "~/.gemini/extensions"}},
		Unreadable: []string{"~/.gemini/mcp_config.json"},
	}
	if diff := cmp.Diff(want, d.Inheritance); diff != "" {
		t.Errorf("Inheritance (-want +got):\n%s", diff)
	}
	if d.Limitation != Limitation {
		t.Errorf("Limitation = %q", d.Limitation)
	}

	pr := New(env, Options{}).Probe(context.Background())
	lim := strings.Join(pr.Limitations, "\n")
	for _, w := range []string{Limitation, "inherited MCP servers: x (", "y (", "z (", "inherited plugins: p ("} {
		if !strings.Contains(lim, w) {
			t.Errorf("probe limitations lack %q:\n%s", w, lim)
		}
	}
	if strings.Contains(lim, "abc999") || strings.Contains(lim, home) {
		t.Errorf("limitations leak a server env value or the home path:\n%s", lim)
	}
	if pr.AuthStatus != "unknown" || pr.Installed {
		t.Errorf("probe = %+v", pr)
	}
}

func TestDiscoverHonoursGeminiCLIHomeAndWorkspace(t *testing.T) {
	cliHome, ws := t.TempDir(), t.TempDir()
	write(t, filepath.Join(cliHome, ".gemini", "settings.json"), `{"mcpServers":{"a":{}}}`)
	write(t, filepath.Join(ws, ".gemini", "settings.json"), `{"mcpServers":{"b":{}}}`)
	write(t, filepath.Join(cliHome, ".gemini", "oauth_creds.json"), `{}`)
	env := config.FromList([]string{"HOME=" + t.TempDir(), "GEMINI_CLI_HOME=" + cliHome})
	got := Discover(env, ws)
	var names []string
	for _, s := range got.MCPServers {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"a", "b"}) {
		t.Errorf("servers = %v, want [a b]", names)
	}
	ev := New(env, Options{}).authEvidence()
	if len(ev) != 1 || !strings.Contains(ev[0], "oauth_creds.json exists (unverified)") {
		t.Errorf("auth evidence = %q", ev)
	}
}
