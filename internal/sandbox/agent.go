package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/coagent8/coagent8/internal/fault"
)

// ProfileAgent is the receipt profile of a delegated-agent run
// ([Sandbox.RunAgent]): the task sandbox's boundary plus one network
// channel, to the provider gate.
const ProfileAgent = "agent"

// ProfileRead is the receipt profile of an agent run whose workspace is
// a read-only projection of the user's ([AgentSpec.Read]).
const ProfileRead = "read"

// ProfileCandidate is the receipt profile of an agent run whose workspace
// is a copy-on-write candidate ([AgentSpec.Candidate]).
const ProfileCandidate = "candidate"

// DefaultGatePort is the port of the gate endpoint inside an agent
// sandbox when [AgentSpec.GatePort] is zero.
const DefaultGatePort = 8080

// AgentSpec describes one delegated-agent run (issue 15 scope 2). It is a
// task [Spec] whose only way out of the sandbox is the gate: the sandbox
// gets a fresh network namespace with loopback up and a single listener,
// 127.0.0.1:GatePort, created inside that namespace by the sandbox's PID 1
// before any command runs and handed to the supervisor, so connections to
// it are accepted outside the sandbox. Nothing else listens in the
// namespace and it has no other interface, route or resolver; Landlock
// admits TCP connect to GatePort only and no bind; seccomp admits TCP
// stream sockets only (no UDP, so no DNS; no MPTCP, raw or packet
// sockets). The caller, never the agent, chooses what serves the
// listener.
type AgentSpec struct {
	Spec
	// GatePort is the gate endpoint's port inside the sandbox, in
	// [1024, 65535]; 0 means [DefaultGatePort]. The agent's base URL is
	// http://127.0.0.1:GatePort.
	GatePort int
	// Gate receives the listener once the sandbox's network is set up,
	// on a goroutine of its own, before the command starts; it typically
	// runs http.Serve(ln, gate). The sandbox closes the listener when the
	// run ends (Gate's Serve then returns). Required.
	Gate func(ln net.Listener)
	// Phantom holds NAME=VALUE entries added to the command's environment
	// even though NAME is a provider credential name (ANTHROPIC_API_KEY,
	// OPENAI_API_KEY, …), which [Spec.Env] always removes: the job's
	// phantom credentials, which only the gate behind the channel
	// accepts. Never a real credential: everything the CLI is given, its
	// commands can read. The receipt lists the names, never the values.
	Phantom []string
	// Read, when set, is the user's workspace (canonical, absolute,
	// symlink-free directory) seen read-only at /job/workspace: the read
	// profile (issue 15 scope 1), nothing copied, nothing writable there
	// (a read-only mount; Landlock grants no write beneath it either).
	// Under a root supervisor the projection is idmapped like a
	// candidate's lower layer, so nobody reads what the owner may.
	// Exclusive with Candidate and Spec.Input.
	Read string
	// Stdin, when set, is copied into a pipe that is the command's
	// standard input (otherwise /dev/null): a CLI that speaks a protocol
	// on stdio (Codex's app-server) is driven through it. At most
	// [MaxAgentStdin] bytes are copied; the pipe is closed at Stdin's EOF,
	// at that bound, and when the run ends (cancellation, deadline, exit),
	// so the command never blocks on a caller that went away. A Read
	// blocked in Stdin is the caller's to end (close its pipe) after
	// RunAgent returns.
	Stdin io.Reader
	// Candidate, when set, makes /job/workspace a copy-on-write view of
	// the user's workspace (the candidate profile, issue 15 scope 1);
	// Spec.Input must then be empty.
	Candidate *Candidate
	// Pinned are read-only files bound by the content their check saw,
	// not by path ([Pin]): the runtime's executables.
	Pinned []Pin
}

// Candidate is the copy-on-write workspace of the candidate profile. The
// sandbox mounts overlayfs (userxattr) at /job/workspace with Workspace
// as its read-only lower layer and Dir/upper as its upper layer: the
// agent's writes land only in Dir/upper, and creating the view copies
// nothing. After the run, Dir/upper holds the candidate's changes (read
// them with candidate.Changes(Workspace, Dir+"/upper")); removing Dir is
// the caller's job. Workspace must not change during the run (overlayfs
// leaves the merged view undefined then).
//
// Under a root supervisor the command runs as nobody, so the lower layer
// is an idmapped mount that shows the workspace owner's files as
// nobody's (mount_setattr MOUNT_ATTR_IDMAP, made by the supervisor); files
// of other owners are read-only in the view. An unprivileged supervisor's
// command already runs as the supervisor's uid.
type Candidate struct {
	// Workspace is the user's directory: canonical, absolute, free of
	// symlinks. It is never written.
	Workspace string
	// Dir is an empty directory of the caller's, disjoint from
	// Workspace, where upper/ and work/ are created. Its path may not
	// contain ',', ':' or a backslash (overlayfs option separators).
	Dir string
	// Seeded says Dir already holds upper/ and nothing else: the
	// caller's starting content of the upper layer (a delegate job whose
	// base is a commit other than the checkout's HEAD: that commit's
	// difference from the checkout, deletions as overlayfs whiteouts).
	// The sandbox accepts only directories, regular files, symbolic links
	// and whiteouts (character device 0:0) in it, at most
	// [MaxSeedEntries], and gives them to the command's user; anything
	// else refuses the run (INVALID_INPUT sandbox.candidate_seed).
	Seeded bool
}

// MaxSeedEntries bounds a seeded upper layer ([Candidate.Seeded]).
const MaxSeedEntries = 200_000

// MaxAgentStdin bounds the bytes copied from [AgentSpec.Stdin] (64 MiB:
// a protocol session's requests, never a data stream).
const MaxAgentStdin = 64 << 20

// gateChannel is an admitted AgentSpec's network channel.
type gateChannel struct {
	port  int
	serve func(net.Listener)
	stdin io.Reader // the command's stdin (AgentSpec.Stdin); nil = /dev/null
}

// RunAgent is [Sandbox.Run] for the agent profile: the same admission,
// qualification, limits, cancellation and receipt (Profile
// [ProfileAgent]), with the gate channel of spec. Errors as for Run;
// fault.InvalidInput reason "sandbox.gate" for a missing Gate or a port
// out of range.
func (s *Sandbox) RunAgent(ctx context.Context, spec AgentSpec) (Receipt, error) {
	j, err := s.admitAgent(spec)
	if err != nil {
		return Receipt{}, s.refuse(err)
	}
	return s.runAdmitted(ctx, j)
}

// admitAgent validates spec into a job with a gate channel.
func (s *Sandbox) admitAgent(spec AgentSpec) (job, error) {
	port := spec.GatePort
	if port == 0 {
		port = DefaultGatePort
	}
	if port < 1024 || port > 65535 {
		return job{}, invalid("sandbox.gate", fmt.Sprintf("gate port %d is outside [1024, 65535]", port))
	}
	if spec.Gate == nil {
		return job{}, invalid("sandbox.gate", "an agent run needs a gate to serve its only network channel")
	}
	j, err := s.admit(spec.Spec)
	if err != nil {
		return job{}, err
	}
	j.gate = &gateChannel{port: port, serve: spec.Gate, stdin: spec.Stdin}
	if j.env, err = addPhantoms(j.env, spec.Phantom); err != nil {
		return job{}, err
	}
	if spec.Read != "" {
		if spec.Input != "" || spec.Candidate != nil {
			return job{}, invalid("sandbox.read", "a read-only workspace excludes the input copy and a candidate")
		}
		if j.readWS, err = s.admitRoot(spec.Read, true); err != nil {
			return job{}, candidateErr("the read-only workspace", spec.Read, err)
		}
	}
	if spec.Candidate != nil {
		if spec.Input != "" {
			return job{}, invalid("sandbox.candidate", "a candidate workspace replaces the input copy; give one or the other")
		}
		if j.candidate, err = s.admitCandidate(*spec.Candidate); err != nil {
			return job{}, err
		}
	}
	if j.git, err = s.admitAgentGit(j); err != nil {
		return job{}, err
	}
	if j.pins, err = admitPins(spec.Pinned, j.binds); err != nil {
		return job{}, err
	}
	return j, nil
}

// candidateRoots is an admitted [Candidate].
type candidateRoots struct {
	workspace, upper, work string
	seeded                 bool // upper/ is the caller's ([Candidate.Seeded])
}

// reasonSeed refuses a seeded upper layer the sandbox does not accept.
const reasonSeed = "sandbox.candidate_seed"

func (s *Sandbox) admitCandidate(c Candidate) (*candidateRoots, error) {
	ws, err := s.admitRoot(c.Workspace, true)
	if err != nil || ws == "" {
		return nil, candidateErr("the candidate workspace", c.Workspace, err)
	}
	dir, err := s.admitRoot(c.Dir, true)
	if err != nil || dir == "" {
		return nil, candidateErr("the candidate directory", c.Dir, err)
	}
	if within(ws, dir) || within(dir, ws) {
		return nil, invalid("sandbox.candidate", "the candidate directory and the workspace overlap")
	}
	if strings.ContainsAny(dir, ",:\\") {
		return nil, invalid("sandbox.candidate", "the candidate directory's path contains ',', ':' or '\\'")
	}
	ents, err := os.ReadDir(dir)
	switch {
	case err != nil:
		return nil, invalid("sandbox.candidate", "the candidate directory cannot be read")
	case !c.Seeded && len(ents) > 0:
		return nil, invalid("sandbox.candidate", "the candidate directory must be empty")
	case c.Seeded && (len(ents) != 1 || ents[0].Name() != "upper" || !ents[0].IsDir()):
		return nil, invalid(reasonSeed, "a seeded candidate directory must hold exactly its upper/ directory")
	}
	return &candidateRoots{workspace: ws, upper: filepath.Join(dir, "upper"), work: filepath.Join(dir, "work"), seeded: c.Seeded}, nil
}

// candidateErr names which root was refused (admitRoot's message says
// why).
func candidateErr(what, p string, err error) error {
	msg := what + " " + strconv.Quote(p) + " is not an admissible directory"
	if fe := (*fault.Error)(nil); errors.As(err, &fe) {
		msg += ": " + fe.Message
	}
	return fault.Wrap(fault.InvalidInput, "sandbox.candidate", msg, err)
}

// addPhantoms adds the phantom entries to env (sorted), replacing an
// entry of the same name. Loader and shell hooks stay refused.
func addPhantoms(env, phantoms []string) ([]string, error) {
	for _, kv := range phantoms {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !envName(k) || v == "" || strings.IndexByte(v, 0) >= 0 || len(kv) > maxArgLen {
			return nil, invalid("sandbox.env", "phantom entries must be NAME=VALUE with a non-empty value")
		}
		if hookNames[strings.ToUpper(k)] || strings.HasPrefix(strings.ToUpper(k), "LD_") {
			return nil, invalid("sandbox.env", fmt.Sprintf("%s cannot carry a phantom credential", k))
		}
		env = slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, k+"=") })
		env = append(env, kv)
	}
	slices.Sort(env)
	return env, nil
}
