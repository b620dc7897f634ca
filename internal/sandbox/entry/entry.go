// Package entry runs the sandbox's own entry points from a package
// initialiser, before the rest of the program is initialised: a
// containment probe (qualification re-executes this binary inside the
// sandbox) and the `coagent8 sandbox run` fast path ([sandboxrun.Fast]).
// Import it for its side effect, from package main only:
//
//	import _ "github.com/coagent8/coagent8/internal/sandbox/entry"
//
// # Why an initialiser
//
// Go runs the initialisers of every package in the binary before main,
// and neither a probe nor a sandboxed run needs the MCP server, adapters,
// SQLite or JSON Schema. Since Go 1.21 packages initialise in import-path
// order as soon as their imports are done, so this package's init runs
// right after those of package sandbox and sandboxrun; everything they do
// not import and that sorts after it is never initialised. For `sandbox
// run -- /usr/bin/true` that is about 0.5 ms of a 8–9 ms run here
// (docs/PERFORMANCE.md); tests build the binary and check the skipped
// packages with GODEBUG=inittrace=1.
//
// In any other process the initialiser returns at once: [sandboxrun.Fast]
// declines anything but a well-formed `sandbox run`, which then reaches
// the full command line with the same flags and messages. main still calls
// [sandbox.MaybeRunChild] so that a binary without this import keeps
// working, only slower.
//
// This is the only initialiser in coagent8 with an effect; it exists for
// start-up cost alone and does nothing the explicit paths would not.
package entry

import (
	"os"

	"github.com/coagent8/coagent8/internal/sandbox"
	"github.com/coagent8/coagent8/internal/sandboxrun"
)

func init() {
	sandbox.MaybeRunChild()
	if code, ok := sandboxrun.Fast(os.Args[1:], os.Stdout, os.Stderr); ok {
		os.Exit(code)
	}
}
