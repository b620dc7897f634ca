package policy

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoIO keeps Decide pure: policy must not depend on the network, a
// database, the filesystem or subprocesses (style guideline 18).
func TestNoIO(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	bad := map[string]bool{"net": true, "net/http": true, "database/sql": true, "os/exec": true,
		"github.com/coagent8/coagent8/internal/store": true, "github.com/coagent8/coagent8/internal/config": true}
	for _, dep := range strings.Fields(string(out)) {
		if bad[dep] {
			t.Errorf("policy depends on %s", dep)
		}
	}
	direct, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(direct)) {
		if imp == "os" || imp == "io/fs" || imp == "time" {
			t.Errorf("policy imports %s directly", imp)
		}
	}
}
