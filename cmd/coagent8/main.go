// Command coagent8 is an MCP server that lets a coding agent consult, get a
// review from, and later delegate work to another local coding agent under
// verified read-only profiles. See README.md.
package main

import (
	"context"
	"os"
	"syscall"

	"github.com/coagent8/coagent8/internal/cli"
	"github.com/coagent8/coagent8/internal/exitstatus"
	"github.com/coagent8/coagent8/internal/sandbox"
	_ "github.com/coagent8/coagent8/internal/sandbox/entry" // runs a containment probe or a well-formed sandbox run before the CLI initialises
)

func main() {
	// A probe normally ran already in entry's initialiser; this call keeps
	// probe mode working should that import ever go.
	sandbox.MaybeRunChild() // containment probe re-exec; returns in a normal process
	ctx, stop := exitstatus.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}
