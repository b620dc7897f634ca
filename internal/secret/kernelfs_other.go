//go:build !linux

package secret

import "os"

// kernelFS is false where there is no procfs-like file system to name.
func kernelFS(*os.File) bool { return false }
