// Package sandboxrun is the `coagent8 sandbox run` and `coagent8 sandbox
// qualify` commands: their flags, the run, the receipt and the exit
// status. Package cli mounts them in its command tree; the same code also
// runs as a fast path from an initialiser (see [Fast]), so a sandboxed
// command starts without initialising the MCP server, SQLite or JSON
// Schema (issue 8 performance).
package sandboxrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/event"
	"github.com/coagent8/coagent8/internal/exitstatus"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/redact"
	"github.com/coagent8/coagent8/internal/sandbox"
)

// Long is the help text of `sandbox run`.
const Long = `Run one command in the task sandbox. The executable must be a canonical
absolute path (no symlinks, no PATH lookup, no shell); arguments are passed
verbatim. The child reads only system directories and --ro paths, writes only
its workspace (a copy of --input), scratch, artifacts and a private /tmp, has
no network and none of this environment. The receipt (JSON) goes to
--receipt, else to stderr after the command's output (--quiet: not to
stderr).

Inside the sandbox:
  /job/workspace   a copy of --input (empty without it); the working
                   directory, or --dir beneath it
  /job/scratch     writable, HOME
  /job/artifacts   writable; copied to --artifacts-out (an existing host
                   directory) after the run
  /tmp             private, 64 MiB
Host paths (--input, --ro, --artifacts-out) are absolute; --ro paths may
not be under /tmp, /proc, /sys, /dev or /run. A limit flag left at 0 takes
its default.

The first run of a new binary or kernel qualifies the sandbox on this host
(see 'coagent8 sandbox qualify'); a host that cannot enforce every boundary
refuses with SANDBOX_UNAVAILABLE. There is no unsandboxed fallback.

Exit status: the command's own status; 128+N when signal N ended it
(137 when it ran out of memory or output and was killed); 124 when
--timeout ended it, as coreutils timeout does; 130 or 143 when coagent8
itself got SIGINT or SIGTERM (the sandboxed tree is killed first). Before the command starts:
2 for bad flags or a command path the sandbox refuses, 3 when the sandbox
is unavailable.`

// Options are the flags of `sandbox run`.
type Options struct {
	spec      sandbox.Spec
	memoryMB  int64
	outputMB  int64
	timeout   time.Duration
	receipt   string
	noReceipt bool
}

// Flags defines the flags of `sandbox run` on f, writing into o. Both the
// cobra command and [Fast] use it, so they accept exactly the same flags.
func Flags(f *pflag.FlagSet, o *Options) {
	f.StringVar(&o.spec.Input, "input", "", "host directory copied into the task workspace")
	f.StringVar(&o.spec.Dir, "dir", "", "working directory relative to the workspace")
	f.StringArrayVar(&o.spec.ReadOnly, "ro", nil, "extra host path bound read-only (repeatable)")
	f.StringArrayVar(&o.spec.Env, "env", nil, "NAME=VALUE for the child (repeatable; credential names are removed)")
	f.StringVar(&o.spec.ArtifactsTo, "artifacts-out", "", "host directory to copy collected artifacts into")
	f.Int64Var(&o.memoryMB, "memory-mb", 0, "memory ceiling in MiB (default 512)")
	f.Int64Var(&o.spec.Limits.Pids, "pids", 0, "process ceiling (default 256)")
	f.Int64Var(&o.spec.Limits.CPU, "cpu-millis", 0, "CPU quota in millicores (default 1000)")
	f.DurationVar(&o.timeout, "timeout", 0, "wall-clock deadline (default 10m)")
	f.Int64Var(&o.outputMB, "output-mb", 0, "stdout+stderr ceiling in MiB (default 16)")
	f.StringVar(&o.receipt, "receipt", "", "write the JSON receipt to this file instead of stderr")
	f.BoolVar(&o.noReceipt, "quiet", false, "do not print the receipt on stderr (a --receipt file is still written)")
}

// UsageError is a bad flag value or a missing host path, found before
// anything ran (the caller prints it as an INVALID_INPUT fault with
// Reason and a usage hint, exit 2). Reason is the sandbox admission's own
// for the same fault (sandbox.path: a host path that is not absolute or
// does not exist), so the early check and the admission name it alike.
type UsageError struct {
	Reason string
	Err    error
}

func (u UsageError) Error() string { return u.Err.Error() }

// Run runs `sandbox run` with options o and the command line args (the
// command's absolute path and its arguments). The command's output goes to
// out and errw, the receipt to --receipt or errw. It returns nil when the
// command exited 0; a [UsageError] before anything ran; an exitstatus.Error
// carrying the command's own status; or a *fault.Error (a refusal names
// what is missing).
func Run(ctx context.Context, env config.Env, out, errw io.Writer, o Options, args []string) error {
	if err := checkHostPaths(o, args[0]); err != nil {
		return err
	}
	receipt, err := openReceipt(o.receipt)
	if err != nil {
		return err
	}
	if receipt != nil {
		defer receipt.Close()
	}
	sb, closeEvents, err := New(env, errw)
	if err != nil {
		return err
	}
	defer closeEvents()
	if removed := sandbox.RemovedEnv(o.spec.Env); len(removed) > 0 {
		// Said before the command's own output, not only in the receipt's
		// env_removed: the user asked for these and the command runs
		// without them.
		fmt.Fprintf(errw, "coagent8: sandbox: --env %s not passed: credential names never reach the sandbox\n", strings.Join(removed, ", "))
	}
	o.spec.Path, o.spec.Args = args[0], args[1:]
	o.spec.Limits.Memory, o.spec.Limits.Output = o.memoryMB<<20, o.outputMB<<20
	o.spec.Limits.Wall = o.timeout
	o.spec.Stdout, o.spec.Stderr = out, errw
	r, err := sb.Run(ctx, o.spec)
	if err != nil {
		return err
	}
	if err := writeReceipt(o, r, receipt, errw); err != nil {
		return err
	}
	return exitFor(r, exitstatus.SignalStatus(ctx))
}

// New returns the task sandbox recording its security events in the state
// directory's event log (diagnostics and notices on errw); call
// closeEvents when done.
func New(env config.Env, errw io.Writer) (sb *sandbox.Sandbox, closeEvents func(), err error) {
	log := redact.NewLogger(errw, env.Home(), env.Get("COAGENT8_DEBUG") != "")
	events, closeEvents := event.OpenStateLog(env.StateDir(), redact.NewDiagnostic(env.Home()), log)
	sb, err = sandbox.New(sandbox.Config{StateDir: env.StateDir(), AutoQualify: true, Notice: errw, Events: events})
	if err != nil {
		closeEvents()
		return nil, nil, err
	}
	return sb, closeEvents, nil
}

// openReceipt creates the --receipt file before anything runs, so a path
// that cannot be written is a usage error, not a failure after the
// command has run. nil when there is no --receipt.
func openReceipt(path string) (*os.File, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, UsageError{"sandbox.receipt", fmt.Errorf("--receipt %q: %w", path, errors.Unwrap(err))}
	}
	return f, nil
}

func writeReceipt(o Options, r sandbox.Receipt, receipt *os.File, errw io.Writer) error {
	if receipt != nil {
		if _, err := receipt.Write(append(r.JSON(), '\n')); err != nil {
			return fault.Wrap(fault.ProcessError, "sandbox.receipt", "the receipt could not be written to "+o.receipt, err)
		}
		return nil
	}
	if o.noReceipt {
		return nil
	}
	_, err := fmt.Fprintf(errw, "%s%s\n", terminalReset(errw), r.JSON())
	return err
}

// terminalReset is what goes before the receipt on w: on a terminal, a
// soft reset (DECSTR) and an attribute reset (SGR 0), so that attributes
// the command left set — concealed text (SGR 8), a foreground the same as
// the background — cannot hide the receipt behind a fake one the command
// printed; "" for a file or a pipe, where the receipt stays plain JSON.
func terminalReset(w io.Writer) string {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return ""
	}
	return resetSequence
}

// resetSequence is DECSTR then SGR 0.
const resetSequence = "\x1b[!p\x1b[0m"

// Qualify runs `sandbox qualify`: the probes' table goes to out.
func Qualify(ctx context.Context, env config.Env, out, errw io.Writer) error {
	sb, closeEvents, err := New(env, errw)
	if err != nil {
		return err
	}
	defer closeEvents()
	q, err := sb.Qualify(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "binary %s\nkernel %s, Landlock ABI %d\npolicy %s\n", q.BinaryDigest, q.KernelRelease, q.LandlockABI, q.PolicyDigest)
	writeProbes(out, q.Probes)
	for _, p := range q.Probes {
		if p.HostLacks != "" {
			fmt.Fprintf(out, "note: this host has no %s (it faults outside the sandbox too): nothing to contain\n", p.HostLacks)
		}
	}
	if !q.Passed {
		for _, p := range q.Probes {
			if !p.Contained {
				fmt.Fprintf(out, "%s: %s\n", p.Name, p.Detail)
			}
		}
		return fault.New(fault.SandboxUnavailable, "sandbox.qualification",
			fmt.Sprintf("qualification failed: %v", q.Failed()))
	}
	fmt.Fprintln(out, "qualified")
	return nil
}

// writeProbes writes the qualification table, one probe a line, its
// name column as wide as the longest name (agent_unix_sockets overran a
// fixed 14).
func writeProbes(w io.Writer, probes []sandbox.ProbeResult) {
	width := 0
	for _, p := range probes {
		width = max(width, len(p.Name))
	}
	for _, p := range probes {
		fmt.Fprintf(w, "  %-*s %-14s %6.0f ms\n", width, p.Name, probeVerdict(p), p.MS)
	}
}

// probeVerdict is a probe's word in the qualification table.
func probeVerdict(p sandbox.ProbeResult) string {
	switch {
	case !p.Contained:
		return "NOT CONTAINED"
	case p.HostLacks != "":
		return "absent (host)"
	}
	return "contained"
}
