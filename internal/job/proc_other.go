//go:build !linux

package job

import "errors"

// startTime is unknown outside Linux; callers fail closed.
func startTime(int) (int64, error) { return 0, errors.ErrUnsupported }
