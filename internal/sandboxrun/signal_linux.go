package sandboxrun

import "golang.org/x/sys/unix"

// signalNumber returns the number of the signal a sandbox receipt names
// ("SIGTERM"), or 0 if unknown. Receipts are written on Linux only.
func signalNumber(name string) int { return int(unix.SignalNum(name)) }
