//go:build !linux

package delegation

import "errors"

// fileKey is unavailable off Linux, where the sandbox refuses anyway.
func fileKey(string) (string, error) { return "", errors.ErrUnsupported }
