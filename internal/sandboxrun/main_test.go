package sandboxrun

import (
	"os"
	"testing"

	"github.com/coagent8/coagent8/internal/sandbox"
)

// TestMain lets the test binary act as a containment probe, as
// cmd/coagent8 does (qualification re-executes it).
func TestMain(m *testing.M) {
	sandbox.MaybeRunChild()
	os.Exit(m.Run())
}
