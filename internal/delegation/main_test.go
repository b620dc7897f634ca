package delegation

import (
	"os"
	"testing"

	"github.com/coagent8/coagent8/internal/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.MaybeRunChild() // qualification probes re-execute this binary
	os.Exit(m.Run())
}
