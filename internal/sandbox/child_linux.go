//go:build linux && amd64

package sandbox

import "os"

// nobody is the host and namespace id the command runs as when the
// supervisor is root (PID 1 itself stays namespace root to mount).
const nobody = 65534

// childStatus is what PID 1 reported: a setup failure, or the command's
// wait status.
type childStatus struct {
	Reason  string
	Missing string
	Error   string
	Exited  bool
	Code    int
	Signal  int
}

// MaybeRunChild runs a containment probe when this process was started as
// one (qualification runs this binary inside the sandbox in probe mode),
// and never returns in that case. In any other process it returns
// immediately. Call it first thing in main and in TestMain, before flags
// are parsed:
//
//	func main() { sandbox.MaybeRunChild(); ... }
func MaybeRunChild() {
	if len(os.Args) > 2 && os.Args[1] == probeArg {
		os.Exit(probeMain(os.Args[2], os.Args[3:]))
	}
}
