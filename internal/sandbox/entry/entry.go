// Package entry runs the sandbox helper (or a containment probe) from a
// package initialiser, before the rest of the program is initialised.
// Import it for its side effect, from package main only:
//
//	import _ "github.com/coagent8/coagent8/internal/sandbox/entry"
//
// # Why an initialiser
//
// Every sandbox run starts this binary twice: the command line, then the
// helper re-executed inside the new namespaces (see the sandbox package's
// "Re-exec" section). Go runs the initialisers of every package in the
// binary before main, and the helper needs none of the MCP server,
// adapters, SQLite or JSON Schema. Since Go 1.21 packages initialise in
// import-path order as soon as their imports are done, so this package's
// init runs right after package sandbox's; everything the helper does not
// import and that sorts after it is never initialised in the helper. On the
// development host the helper runs 109 of the binary's 132 initialisers
// that do work, and its initialisation time fell from about 1.5 ms to
// 0.9 ms (GODEBUG=inittrace=1; issue 8 performance).
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
