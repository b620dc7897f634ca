package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/sandbox"
)

// newSandboxCmd is `coagent8 sandbox run|qualify` (issue 8).
func newSandboxCmd(a *app) *cobra.Command {
	c := &cobra.Command{Use: "sandbox", Short: "Task sandbox: run a command with zero network, a task workspace and outside limits"}
	c.AddCommand(newSandboxRunCmd(a), newSandboxQualifyCmd(a))
	return c
}

// sandboxRunOptions are the flags of `sandbox run`.
type sandboxRunOptions struct {
	spec      sandbox.Spec
	memoryMB  int64
	outputMB  int64
	timeout   time.Duration
	receipt   string
	noReceipt bool
}

func newSandboxRunCmd(a *app) *cobra.Command {
	var o sandboxRunOptions
	c := &cobra.Command{
		Use:   "run [flags] -- /abs/path/to/cmd [args...]",
		Short: "Run one command in the task sandbox and print its containment receipt",
		Long: `Run one command in the task sandbox. The executable must be a canonical
absolute path (no symlinks, no PATH lookup, no shell); arguments are passed
verbatim. The child reads only system directories and --ro paths, writes only
its workspace (a copy of --input), scratch, artifacts and a private /tmp, has
no network and none of this environment. The receipt (JSON) goes to
--receipt, else to stderr after the command's output.

The first run of a new binary or kernel qualifies the sandbox on this host
(see 'coagent8 sandbox qualify'); a host that cannot enforce every boundary
refuses with SANDBOX_UNAVAILABLE. There is no unsandboxed fallback.

Exit status: the command's own status; 128+N when signal N ended it
(137 when it ran out of memory or output and was killed); 124 when
--timeout ended it, as coreutils timeout does. Before the command starts:
2 for bad flags or a command path the sandbox refuses, 3 when the sandbox
is unavailable.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("missing the command: put its absolute path and arguments after --")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 0 {
				return usageError{fmt.Errorf("put the command after --")}
			}
			return a.sandboxRun(cmd, o, args)
		},
	}
	f := c.Flags()
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
	f.BoolVar(&o.noReceipt, "quiet", false, "do not print the receipt")
	return c
}

// newSandbox returns the task sandbox recording its security events in the
// state directory's event log; call closeEvents when done.
func (a *app) newSandbox() (sb *sandbox.Sandbox, closeEvents func(), err error) {
	events, closeEvents := a.eventSink(a.logger())
	sb, err = sandbox.New(sandbox.Config{StateDir: a.env.StateDir(), AutoQualify: true, Notice: a.io.Err, Events: events})
	if err != nil {
		closeEvents()
		return nil, nil, err
	}
	return sb, closeEvents, nil
}

func (a *app) sandboxRun(cmd *cobra.Command, o sandboxRunOptions, args []string) error {
	if err := checkHostPaths(o, args[0]); err != nil {
		return err
	}
	sb, closeEvents, err := a.newSandbox()
	if err != nil {
		return err
	}
	defer closeEvents()
	o.spec.Path, o.spec.Args = args[0], args[1:]
	o.spec.Limits.Memory, o.spec.Limits.Output = o.memoryMB<<20, o.outputMB<<20
	o.spec.Limits.Wall = o.timeout
	o.spec.Stdout, o.spec.Stderr = a.io.Out, a.io.Err
	r, err := sb.Run(cmd.Context(), o.spec)
	if err != nil {
		return err
	}
	if err := a.writeReceipt(o, r); err != nil {
		return err
	}
	return sandboxExit(r)
}

func (a *app) writeReceipt(o sandboxRunOptions, r sandbox.Receipt) error {
	switch {
	case o.noReceipt:
		return nil
	case o.receipt != "":
		return os.WriteFile(o.receipt, append(r.JSON(), '\n'), 0o600)
	}
	_, err := fmt.Fprintf(a.io.Err, "%s\n", r.JSON())
	return err
}

func newSandboxQualifyCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "qualify",
		Short: "Run the containment probes inside the sandbox and record the result for this binary and kernel",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sb, closeEvents, err := a.newSandbox()
			if err != nil {
				return err
			}
			defer closeEvents()
			q, err := sb.Qualify(cmd.Context())
			if err != nil {
				return err
			}
			return a.printQualification(q)
		},
	}
}

func (a *app) printQualification(q sandbox.Qualification) error {
	w := a.io.Out
	fmt.Fprintf(w, "binary %s\nkernel %s, Landlock ABI %d\npolicy %s\n", q.BinaryDigest, q.KernelRelease, q.LandlockABI, q.PolicyDigest)
	for _, p := range q.Probes {
		verdict := "contained"
		if !p.Contained {
			verdict = "NOT CONTAINED"
		}
		fmt.Fprintf(w, "  %-14s %-13s %6.0f ms\n", p.Name, verdict, p.MS)
	}
	if !q.Passed {
		return fault.New(fault.SandboxUnavailable, "sandbox.qualification",
			fmt.Sprintf("qualification failed: %v", q.Failed()))
	}
	fmt.Fprintln(w, "qualified")
	return nil
}
