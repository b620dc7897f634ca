//go:build !linux

// Command delegatebench measures overlayfs candidate workspaces, which are
// Linux-only; elsewhere it says so and fails.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "delegatebench: overlayfs candidate workspaces need Linux")
	os.Exit(1)
}
