package admission

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAdmitRunsNoConfiguredDriver: the repository configures filter and
// merge drivers (each would create a canary) and the candidate's
// .gitattributes names them for every path; quarantine builds the patch
// and admission (acknowledged: the driver line taints) applies it
// without any driver running on the host — coagent8's git sets every
// configured driver to "" (issue 15 scope 1). Before, the smudge filter
// ran in checkout-index of the general (three-way) path.
func TestAdmitRunsNoConfiguredDriver(t *testing.T) {
	f := newFixture(t, baseFiles)
	canaries := t.TempDir()
	for _, kv := range [][2]string{{"filter.x.clean", "clean"}, {"filter.x.smudge", "smudge"}, {"merge.x.driver", "merge"}} {
		gitRun(t, f.ws, "config", kv[0], "touch "+filepath.Join(canaries, kv[1])+"; cat")
	}
	// The checkout moved since base (a.go), so the snapshot reads it
	// through update-index and the apply may merge.
	agent := strings.Replace(baseFiles["a.go"], "return 26", "return 27", 1)
	id := f.job(edit{path: ".gitattributes", content: "* filter=x merge=x\n"}, edit{path: "keep.txt", content: "agent\n"},
		edit{path: "a.go", content: agent})
	writeFile(t, f.ws, "a.go", strings.Replace(baseFiles["a.go"], "return 1", "return 100", 1))
	gitRun(t, f.ws, "commit", "-qam", "user")
	if _, err := f.admit(id, "tainted"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, "keep.txt")); string(b) != "agent\n" {
		t.Errorf("keep.txt = %q after admission, want the candidate's", b)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, "a.go")); !strings.Contains(string(b), "return 100") || !strings.Contains(string(b), "return 27") {
		t.Errorf("a.go = %q, want both the user's and the agent's change", b)
	}
	ents, _ := os.ReadDir(canaries)
	for _, e := range ents {
		t.Errorf("a configured %s driver ran on the host", e.Name())
	}
}
