//go:build linux && amd64

package sandbox

import (
	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// landlockConfig is the ABI 6 configuration: every filesystem right up to
// ABI 5 handled, TCP bind and connect handled with no rule (no TCP at all),
// abstract-socket and signal scopes. It is a hard requirement, never
// BestEffort (notes §4: BestEffort succeeds with no Landlock).
var landlockConfig = landlock.V6

// landlockRules grant read+execute on the synthesized root (which holds
// only what the supervisor chose), read-write on the job's folders and the
// private /tmp, and write on the harmless device nodes.
func landlockRules() []landlock.Rule {
	return []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWDirs(insideWorkspace, insideScratch, insideArtifacts, "/tmp", "/dev/shm").WithRefer(),
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full"),
	}
}

// restrictLandlock enforces the ruleset on the calling thread only; the
// command is forked from this thread. (All-threads enforcement would go
// through libpsx under cgo, which hangs as PID 1 — notes §4.)
func restrictLandlock() error {
	fd, flags, err := landlockConfig.NewRulesetFD(landlockRules()...)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return ll.LandlockRestrictSelf(fd, flags)
}
