//go:build linux && amd64

package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"
)

// policyVersion changes whenever the enforcement changes in a way the
// filter or rule digests below would not show (mount plan, id mapping).
const policyVersion = "task-sandbox/4"

var policyDigest = sync.OnceValue(func() string {
	h := sha256.New()
	f := filterDigest()
	// The agent filter is part of it: qualification also probes the
	// agent profile (agent_* probes), and RunAgent requires the record.
	// So is the verify view (verify_* probes, RunVerify).
	fmt.Fprintf(h, "%s\nseccomp %x\nagent seccomp %x\n%s\nlandlock %v\nrules %v\nsystem %s\netc %s\ndev %s\n", policyVersion, f,
		progDigest(buildAgentFilter()), verifyViewVersion,
		landlockConfig, landlockRules, strings.Join(systemDirs, ","), strings.Join(etcBinds, ","), strings.Join(devNodes, ","))
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
})

// agentPolicyDigest is the agent profile's policy: the task policy, the
// agent filter, the gate channel's port and the workspace view of the
// profile (agent: a copy; candidate: overlay with userxattr and volatile
// on an idmapped lower; read: an idmapped read-only projection with a
// read-only Landlock rule).
func agentPolicyDigest(port int, profile string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\nagent seccomp %x\ngate 127.0.0.1:%d\nprofile %s/2 idmap-to %d\n", policyDigest(),
		progDigest(buildAgentFilter()), port, profile, nobody)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
