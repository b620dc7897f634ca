// Package sandbox runs one non-agent command (a test suite, a linter, a
// build) in the task sandbox: zero network, a task-scoped workspace, limits
// enforced from outside the child, whole-tree cancellation and a containment
// receipt for every run (requirements §1.7, R-068–R-076; seed 001 "Tomb
// Execution Contract").
//
// # Security model
//
// The child can read only the system directories it needs (read-only binds)
// and the paths the trusted caller lists, write only its workspace, scratch,
// artifacts and a sized /tmp, reach no network (own network namespace with
// loopback down, no AF_INET sockets), see none of the caller's environment
// (allowlist; provider credential names always removed) and cannot outlive
// cancellation (PID namespace, cgroup.kill, emptiness verified).
//
// Enforcement is layered, outermost first: cgroups (memory, pids, cpu,
// kill), namespaces (user, mount, PID, network, IPC, UTS, cgroup), a fresh
// root built by pivot_root, Landlock (ABI ≥ 6 hard floor: filesystem, TCP,
// abstract-socket and signal scopes), no_new_privs, capability drop and a
// seccomp allowlist that kills foreign-ABI (ia32, x32) system calls. Design
// and probe list: notes/sandbox.md.
//
// # Refusal
//
// There is no unsandboxed fallback and no flag that disables a layer. When a
// required capability is missing the run is refused with
// fault.SandboxUnavailable naming what is missing. A run is also refused when
// no passing qualification record exists for the current binary, kernel and
// policy ([Sandbox.Qualify]).
//
// # Evidence
//
// With Config.Events set, refusals, qualification results, admissions and
// receipt summaries are recorded as security events (identifiers and exit
// classes, never command output or arguments). A configured sink that
// cannot be written refuses the run (R-197, reason audit.sink_unwritable).
//
// # Process structure
//
// The sandbox's PID 1 is forked from the supervisor with clone3 (every
// namespace at once, directly into the job's cgroup) and never runs Go
// code: the supervisor compiles the whole setup (fresh root, pivot,
// privilege drop, Landlock, seccomp) into a list of raw system calls that
// the child replays the way the standard library's fork/exec child does,
// then forks the command and stays only to reap and report its status
// (fork_linux.go, plan_linux.go). No second program starts before the
// command, which keeps a run of /usr/bin/true within reach of bwrap's cost.
//
// Each job root holds a lock file its supervisor keeps flock'ed; a run
// first sweeps job roots and cgroups whose lock is free (their supervisor
// died; its sandboxed processes died with it through the parent-death
// signal and the PID namespace).
//
// # Identity
//
// An unprivileged supervisor's command runs as namespace root mapped to
// the supervisor's own uid. It needs a cgroup delegated to it and a user
// namespace with capabilities: a host that denies one is refused before
// anything starts (sandbox.cgroup, sandbox.userns_unprivileged naming
// the kernel setting). TestUnprivilegedSupervisor runs this path as uid
// 65534 when the tests run as root. A root supervisor's command runs as host uid
// and gid 65534 (nobody); a host process that also runs as nobody could
// ptrace it, so keep nobody unused or run the supervisor unprivileged.
//
// Qualification probes run this binary inside the sandbox with a hidden
// probe argument. Programs that use this package must call [MaybeRunChild]
// first thing in main (and in TestMain); it returns immediately in a normal
// process.
//
// # Agent profile
//
// [Sandbox.RunAgent] is the delegated-agent boundary's network layer
// (issue 15 scope 2): the same boundary plus exactly one channel, a
// listener on 127.0.0.1:GatePort that PID 1 creates inside the fresh
// network namespace and hands to the supervisor before the command starts
// (gate_linux.go). Landlock admits TCP connect to that port only and no
// bind; seccomp admits TCP stream sockets only. A task [Spec] still has no
// network or credential field: only an [AgentSpec], a distinct
// type and entry point, gets the channel. Its workspace is a copy
// (Spec.Input), a read-only projection ([AgentSpec.Read], profile read) or
// a copy-on-write overlay ([AgentSpec.Candidate], profile candidate);
// under a root supervisor both views are idmapped so the command, running
// as nobody, has the owner's access (candidate_linux.go).
//
// # Non-goals
//
// Linux/amd64 only; other platforms compile and refuse with
// fault.Unsupported.
package sandbox
