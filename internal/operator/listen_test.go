package operator

import (
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
)

func TestOperatorListenRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0", "192.0.2.1:0", "127.0.0.2:0", "localhost:0",
		"[::ffff:127.0.0.1]:0", "[fe80::1%lo]:0", "127.0.0.1", "127.0.0.1:99999", "example.com:80", ""} {
		t.Run(addr, func(t *testing.T) {
			ln, err := Listen(addr)
			if err == nil {
				ln.Close()
				t.Fatalf("Listen(%q) succeeded", addr)
			}
			var fe *fault.Error
			if !asFault(err, &fe) || fe.Code != fault.InvalidInput || fe.Reason != "operator.non_loopback" {
				t.Fatalf("Listen(%q) = %v, want INVALID_INPUT operator.non_loopback", addr, err)
			}
		})
	}
}

func TestOperatorListenLoopback(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0"} {
		ln, err := Listen(addr)
		if err != nil {
			t.Fatalf("Listen(%q): %v", addr, err)
		}
		ln.Close()
	}
}

func asFault(err error, fe **fault.Error) bool {
	f, ok := err.(*fault.Error)
	*fe = f
	return ok
}
