package governor_test

import "errors"

// mkfifo: Windows has no FIFOs (delegate jobs and the kernel read profile
// are Linux-only; these tests only build there).
func mkfifo(string) error { return errors.ErrUnsupported }
