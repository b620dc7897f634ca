//go:build !unix

package gate

import "time"

// cpuTime is not measured here: the benchmark's CPU metric reads 0.
func cpuTime() time.Duration { return 0 }
