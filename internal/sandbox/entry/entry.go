// Package entry runs a containment probe from a package initialiser,
// before the rest of the program is initialised. Import it for its side
// effect, from package main only:
//
//	import _ "github.com/coagent8/coagent8/internal/sandbox/entry"
//
// # Why an initialiser
//
// Qualification runs this binary inside the sandbox once per containment
// probe (the sandbox package's "Qualification" section). Go runs the
// initialisers of every package in the binary before main, and a probe
// needs none of the MCP server, adapters, SQLite or JSON Schema. Since Go
// 1.21 packages initialise in import-path order as soon as their imports
// are done, so this package's init runs right after package sandbox's;
// everything a probe does not import and that sorts after it is never
// initialised in a probe.
//
// In any other process the initialiser returns at once (one comparison of
// os.Args); main still calls [sandbox.MaybeRunChild] so that a binary
// without this import keeps working, only slower.
//
// This is the only initialiser in coagent8 with an effect; it exists for
// start-up cost alone and does nothing the explicit call in main would not.
package entry

import "github.com/coagent8/coagent8/internal/sandbox"

func init() { sandbox.MaybeRunChild() }
