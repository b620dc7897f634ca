package verify

import (
	"os"
	"testing"

	"github.com/coagent8/coagent8/internal/sandbox"
)

// TestMain lets the test binary act as the sandbox helper (re-exec).
func TestMain(m *testing.M) {
	sandbox.MaybeRunChild()
	os.Exit(m.Run())
}
