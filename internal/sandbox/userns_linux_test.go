//go:build linux && amd64

package sandbox

import (
	"testing"

	"github.com/coagent8/coagent8/internal/fault"
)

// TestCheckUnprivilegedUserns: the kernel settings that deny an
// unprivileged supervisor its user namespace refuse it (typed, naming the
// setting); root, absent settings and a confined process are not refused
// here.
func TestCheckUnprivilegedUserns(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		euid  int
		want  string // refusal reason, "" = admitted
	}{
		{"no settings", nil, 1000, ""},
		{"clone allowed", map[string]string{"sys/kernel/unprivileged_userns_clone": "1\n"}, 1000, ""},
		{"clone disabled", map[string]string{"sys/kernel/unprivileged_userns_clone": "0\n"}, 1000, "sandbox." + reasonUnprivUserns},
		{"clone disabled, root", map[string]string{"sys/kernel/unprivileged_userns_clone": "0\n"}, 0, ""},
		{"apparmor, unconfined", map[string]string{"sys/kernel/apparmor_restrict_unprivileged_userns": "1\n",
			"self/attr/apparmor/current": "unconfined\n"}, 1000, "sandbox." + reasonUnprivUserns},
		{"apparmor, no label", map[string]string{"sys/kernel/apparmor_restrict_unprivileged_userns": "1\n"}, 1000,
			"sandbox." + reasonUnprivUserns},
		{"apparmor, confined", map[string]string{"sys/kernel/apparmor_restrict_unprivileged_userns": "1\n",
			"self/attr/apparmor/current": "coagent8 (enforce)\n"}, 1000, ""},
		{"apparmor off", map[string]string{"sys/kernel/apparmor_restrict_unprivileged_userns": "0\n",
			"self/attr/current": "unconfined\n"}, 1000, ""},
	} {
		root := t.TempDir()
		writeTree(t, root, tc.files)
		err := checkUnprivilegedUserns(root, tc.euid)
		got := ""
		if fe := fault.From(err); fe != nil {
			got = fe.Reason
			if fe.Code != fault.SandboxUnavailable || fe.Details["missing"] == "" {
				t.Errorf("%s: %v, want SANDBOX_UNAVAILABLE naming what is missing", tc.name, err)
			}
		} else if err != nil {
			t.Errorf("%s: untyped %v", tc.name, err)
		}
		if got != tc.want {
			t.Errorf("%s: reason %q, want %q (%v)", tc.name, got, tc.want, err)
		}
	}
}
