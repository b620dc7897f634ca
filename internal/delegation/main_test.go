package delegation

import (
	"os"
	"testing"

	"github.com/coagent8/coagent8/internal/sandbox"
)

// sharedState is the package's test state directory: one sandbox
// qualification (and one per runtime) serves every test instead of
// qualifying again in each.
var sharedState string

func TestMain(m *testing.M) {
	sandbox.MaybeRunChild() // qualification probes re-execute this binary
	dir, err := os.MkdirTemp("", "coagent8-delegation-state-")
	if err != nil {
		panic(err)
	}
	sharedState = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
