// Package version reports coagent8's build identity.
package version

import "runtime/debug"

// Version is set at link time (-ldflags "-X .../version.Version=v1.2.3");
// otherwise it comes from the module build info, else "dev".
var Version = ""

// String returns the version string.
func String() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "0.1.0-dev"
}
