//go:build !windows

package exitstatus

// brokenPipeOS reports nothing more than EPIPE outside Windows.
func brokenPipeOS(error) bool { return false }
