//go:build linux && amd64

package sandbox

import (
	"slices"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// landlockConfig is the ABI 6 configuration: every filesystem right up to
// ABI 5 handled, TCP bind and connect handled with no rule (no TCP at all),
// abstract-socket and signal scopes. It is a hard requirement, never
// BestEffort (notes §4: BestEffort succeeds with no Landlock).
var landlockConfig = landlock.V6

// Access sets of the rules, as go-landlock defines RODirs, RWDirs and
// RWFiles (path_opt.go, config.go of go-landlock v0.11).
const (
	llRead      = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	llWrite     = ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeChar | ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSMakeBlock | ll.AccessFSMakeSym | ll.AccessFSTruncate
	llFileOnly  = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSTruncate | ll.AccessFSReadFile
	llRODirs    = llRead
	llRWDirsRef = llRead | llWrite | ll.AccessFSRefer
	llRWFiles   = (llRead | llWrite) & llFileOnly
)

// landlockRule grants access on the hierarchy at path (inside the new
// root).
type landlockRule struct {
	path   string
	access uint64
}

// landlockRules grant read+execute on the synthesized root (which holds
// only what the supervisor chose), read-write on the job's folders and the
// private /tmp, and write on the harmless device nodes.
var landlockRules = []landlockRule{
	{"/", llRODirs},
	{insideWorkspace, llRWDirsRef}, {insideScratch, llRWDirsRef}, {insideArtifacts, llRWDirsRef},
	{"/tmp", llRWDirsRef}, {"/dev/shm", llRWDirsRef},
	{"/dev/null", llRWFiles}, {"/dev/zero", llRWFiles}, {"/dev/full", llRWFiles},
}

// landlock plans the ruleset: create it, add one path-beneath rule per
// entry (each path opened O_PATH inside the new root), restrict the
// process. Every handled right is one the host's ABI supports (checkHost
// requires ABI ≥ 6), and a rule's rights must be a subset of the handled
// ones or landlock_add_rule fails the run. gatePort > 0 adds the agent
// profile's one network rule; roWorkspace downgrades the workspace's rule
// to read (the read profile).
func (p *plan) landlock(gatePort int, roWorkspace bool) {
	attr := &ll.RulesetAttr{HandledAccessFS: uint64(landlockConfig.HandledAccessFS),
		HandledAccessNet: uint64(landlockConfig.HandledAccessNet), Scoped: uint64(landlockConfig.Scoped)}
	p.keep = append(p.keep, attr)
	// The kernel's struct is the first three fields (ABI ≤ 9).
	p.add("landlock", sysOp{nr: unix.SYS_LANDLOCK_CREATE_RULESET,
		args: [6]uintptr{uintptr(unsafe.Pointer(attr)), 24, 0}, out: regRuleset})
	rules := slices.Clone(landlockRules)
	for _, d := range p.extraRW {
		rules = append(rules, landlockRule{d, llRWDirsRef})
	}
	for _, r := range rules {
		if roWorkspace && r.path == insideWorkspace {
			r.access = llRODirs
		}
		pb := &ll.PathBeneathAttr{AllowedAccess: r.access & uint64(landlockConfig.HandledAccessFS)}
		p.keep = append(p.keep, pb)
		p.add("landlock", sysOp{nr: unix.SYS_OPENAT, args: [6]uintptr{atFDCWD, p.cstr(r.path), unix.O_PATH | unix.O_CLOEXEC},
			out: regFile, store: &pb.ParentFd})
		p.add("landlock", sysOp{nr: unix.SYS_LANDLOCK_ADD_RULE, args: [6]uintptr{0, ll.RuleTypePathBeneath, uintptr(unsafe.Pointer(pb))},
			in: [6]uint8{regRuleset}})
		p.add("landlock", sysOp{nr: unix.SYS_CLOSE, in: [6]uint8{regFile}})
	}
	if gatePort > 0 {
		p.landlockGate(gatePort)
	}
	p.add("landlock", sysOp{nr: unix.SYS_LANDLOCK_RESTRICT_SELF, in: [6]uint8{regRuleset}})
	p.add("landlock", sysOp{nr: unix.SYS_CLOSE, in: [6]uint8{regRuleset}})
}
