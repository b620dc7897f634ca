//go:build !linux

package sandboxrun

// signalNumber returns 0: the task sandbox, whose receipts name signals,
// runs on Linux only (elsewhere `sandbox run` refuses with
// SANDBOX_UNAVAILABLE before any receipt exists).
func signalNumber(string) int { return 0 }
