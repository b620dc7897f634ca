package sandbox

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	MaybeRunChild()
	os.Exit(m.Run())
}
