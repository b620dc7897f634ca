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
// SQLite or JSON Schema. Since Go 1.21 the runtime initialises, at each
// step, the first package in import-path order whose imports are done, so
// this package's init runs as soon as sandbox and sandboxrun (and what
// sorts before it and is ready by then) are initialised; the initialisers
// the order puts after it never run. Here that skips the MCP SDK, JSON
// Schema, SQLite and cobra (113 of 134 initialisers still run), about
// 0.5 ms of a 8–9 ms `sandbox run -- /usr/bin/true` (docs/PERFORMANCE.md);
// tests build the binary and check the skipped packages with
// GODEBUG=inittrace=1.
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
