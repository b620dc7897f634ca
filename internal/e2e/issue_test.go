package e2e

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coagent8/coagent8/internal/adapter/agy"
	"github.com/coagent8/coagent8/internal/issuereport"
	"github.com/coagent8/coagent8/internal/providertest"
	"github.com/coagent8/coagent8/internal/redact/redacttest"
)

// TestDoctorNamesAgyInheritance: a fake agy configuration
// with MCP servers x and y (one with a token in its env) and plugin p →
// the doctor tool names x, y and p with the limitation sentence; the
// token and the home path never appear.
func TestDoctorNamesAgyInheritance(t *testing.T) {
	environ := env(t, "http://127.0.0.1:9")
	home := homeOf(environ)
	token := "abc" + strings.Repeat("Q7x", 12)
	writeConfig(t, filepath.Join(home, ".gemini", "settings.json"), `{
		// agy settings with comments
		"mcpServers": {
			"x": {"command": "`+home+`/bin/x-server", "env": {"API_TOKEN": "`+token+`"}},
			"y": {"url": "http://127.0.0.1:1/mcp"}
		}
	}`)
	if err := os.MkdirAll(filepath.Join(home, ".gemini", "extensions", "p"), 0o700); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, environ)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "doctor", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	sc := structured(t, res)
	validateOutput(t, cs, "doctor", sc)
	sections, _ := sc["sections"].(map[string]any)
	section, _ := sections["agy"].(map[string]any)
	inh, _ := section["inherited"].(map[string]any)
	got := map[string]any{"limitation": section["limitation"], "servers": names(inh["mcpServers"]), "plugins": names(inh["plugins"])}
	want := map[string]any{"limitation": agy.Limitation, "servers": []string{"x", "y"}, "plugins": []string{"p"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("doctor agy section (-want +got):\n%s\nreport: %v", d, sc)
	}
	raw, _ := json.Marshal(sc)
	text := res.Content[0].(*mcp.TextContent).Text
	for _, out := range []string{string(raw), text} {
		if strings.Contains(out, token[3:9]) || strings.Contains(out, home) {
			t.Fatalf("doctor output leaks the token or the home path:\n%s", out)
		}
		if !strings.Contains(out, "~/.gemini/settings.json") {
			t.Fatalf("doctor output does not name the source as ~/.gemini/settings.json:\n%s", out)
		}
	}
}

func names(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		m, _ := x.(map[string]any)
		s, _ := m["name"].(string)
		out = append(out, s)
	}
	return out
}

// TestIssueCanary: the issue tool's title, body, link and text content
// carry no fragment of any synthetic credential and no home path, even
// when the caller's text and the last error (a refused consult whose path
// held secrets) contain them; the link is well formed and bounded.
func TestIssueCanary(t *testing.T) {
	dbl := providertest.NewAnthropic(t, providertest.Options{})
	environ := env(t, dbl.URL())
	home := homeOf(environ)
	cs := connect(t, environ)
	canaries := redacttest.All()
	var plant []string
	for _, c := range canaries {
		plant = append(plant, c.Text)
	}
	secrets := strings.Join(plant, "\n")

	// A failure whose public message names a path under home with a secret
	// in it becomes the "last error".
	missing := filepath.Join(home, "proj", pathSafe(t, canaries))
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "consult", Arguments: map[string]any{
		"proposal": "p", "backend": "claude", "workspace_path": missing}})
	if err != nil || !res.IsError {
		t.Fatalf("consult with a missing workspace: err=%v result=%v", err, res)
	}

	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "issue", Arguments: map[string]any{
		"error_message": "review crashed in " + home + "/proj/main.go with " + canaries[1].Text + "\n" + secrets,
		"context":       "env dump:\n" + secrets + "\n```go\nconst key = \"" + canaries[2].Text + "\"\n```\nother user /home/bob/x",
	}})
	if err != nil {
		t.Fatal(err)
	}
	sc := structured(t, res)
	validateOutput(t, cs, "issue", sc)
	raw, _ := json.Marshal(sc)
	text := res.Content[0].(*mcp.TextContent).Text
	link, _ := sc["issueUrl"].(string)
	u, err := url.Parse(link)
	if err != nil {
		t.Fatalf("issueUrl %q: %v", link, err)
	}
	decoded := u.Query().Get("title") + "\n" + u.Query().Get("body")
	for name, out := range map[string]string{"structuredContent": string(raw), "text": text, "decoded link": decoded} {
		redacttest.AssertNoLeak(t, []byte(out), canaries)
		for _, p := range []string{home, "/home/bob"} {
			if strings.Contains(out, p) {
				t.Errorf("%s contains the home path %q", name, p)
			}
		}
	}
	body, _ := sc["body"].(string)
	title, _ := sc["title"].(string)
	for _, want := range []string{"### Last error", "INVALID_INPUT", "### Versions", "### Doctor summary", "~/proj/main.go"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	if !strings.HasPrefix(title, "[Bug]: review crashed in ~/proj/main.go") || u.Query().Get("title") != title {
		t.Errorf("title = %q, link title = %q", title, u.Query().Get("title"))
	}
	if !strings.HasPrefix(link, issuereport.NewIssueURL+"?") || len(link) > issuereport.MaxURL || len(body) > issuereport.MaxBody {
		t.Errorf("link (%d B) or body (%d B) out of bounds: %s", len(link), len(body), link)
	}
	if n := modelRequests(dbl); n != 0 {
		t.Errorf("issue or the refused consult reached the model (%d requests)", n)
	}
}

// pathSafe returns a canary that can be a path element.
func pathSafe(t *testing.T, cs []redacttest.Canary) string {
	for _, c := range cs {
		if strings.HasPrefix(c.Name, "github-") && !strings.ContainsAny(c.Text, "/ \n") {
			return c.Text
		}
	}
	t.Fatal("no path-safe canary")
	return ""
}
