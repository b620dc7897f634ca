//go:build linux && amd64

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// reasonUnprivUserns is the refusal reason (sandbox.<reason>) of a host
// whose kernel settings keep an unprivileged supervisor from creating a
// usable user namespace.
const reasonUnprivUserns = "userns_unprivileged"

// testOnlyProcRoot, when set, replaces /proc for checkUnprivilegedUserns
// so a test can present the sysctl values of a restricting host.
var testOnlyProcRoot string

// checkUnprivilegedUserns refuses, before anything starts, a host on
// which a supervisor running as euid (not root) cannot get the user
// namespace the whole boundary is built in; root is not affected. Two
// kernel settings do that, and without this check each showed up only as
// a setup step failing inside PID 1 (sandbox.setup naming a mount or
// the clone), which named a symptom, not the setting to change:
//
//   - kernel.unprivileged_userns_clone = 0 (Debian and older Ubuntu
//     kernels): clone(CLONE_NEWUSER) fails with EPERM;
//   - kernel.apparmor_restrict_unprivileged_userns = 1 (Ubuntu 23.10 and
//     later) while this process is unconfined: the namespace is created
//     but holds no capability, so the first mount fails. A process
//     confined by a profile may be granted "userns" by it, which cannot
//     be read from here: then the setup steps decide, as before.
//
// procRoot is "/proc" outside tests. A setting that cannot be read is
// absent on this kernel and restricts nothing.
func checkUnprivilegedUserns(procRoot string, euid int) error {
	if euid == 0 {
		return nil
	}
	sysctl := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(procRoot, "sys", strings.ReplaceAll(name, ".", "/")))
		return strings.TrimSpace(string(b))
	}
	if sysctl("kernel.unprivileged_userns_clone") == "0" {
		return unavailable(reasonUnprivUserns, "unprivileged user namespaces (kernel.unprivileged_userns_clone is 0: "+
			"set it to 1, or run the supervisor as root)", nil)
	}
	if sysctl("kernel.apparmor_restrict_unprivileged_userns") == "1" && unconfined(procRoot) {
		return unavailable(reasonUnprivUserns, "unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns is 1 "+
			"and this process is unconfined: install an AppArmor profile that allows userns for coagent8, "+
			"set the sysctl to 0, or run the supervisor as root)", nil)
	}
	return nil
}

// unconfined reports whether AppArmor treats this process as unconfined
// (the label the restriction applies to).
func unconfined(procRoot string) bool {
	for _, p := range []string{"self/attr/apparmor/current", "self/attr/current"} {
		if b, err := os.ReadFile(filepath.Join(procRoot, p)); err == nil {
			return strings.TrimSpace(strings.TrimRight(string(b), "\x00")) == "unconfined"
		}
	}
	return true
}

func procRoot() string {
	if testOnlyProcRoot != "" {
		return testOnlyProcRoot
	}
	return "/proc"
}
