//go:build !linux

package delegation

import (
	"errors"
	"os"
)

// fileKey is unavailable off Linux, where the sandbox refuses anyway.
func fileKey(string) (string, error) { return "", errors.ErrUnsupported }

// fdKey is unavailable off Linux.
func fdKey(*os.File) (string, error) { return "", errors.ErrUnsupported }

// oNoFollow is 0 off Linux (nothing runs there).
const oNoFollow = 0
