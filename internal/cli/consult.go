package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/governor"
	"github.com/coagent8/coagent8/internal/mcpserver"
	"github.com/coagent8/coagent8/internal/turn"
)

type consultOptions struct {
	backend, workspace, model, effort, taskType, session, mode string
	timeout                                                    time.Duration
	files                                                      []string
	asJSON                                                     bool
}

func newConsultCmd(a *app) *cobra.Command {
	o := &consultOptions{}
	cmd := &cobra.Command{
		Use:   "consult [flags] QUESTION  (or - to read the question from stdin)",
		Short: "Consult a backend once from the terminal (same path as the MCP consult tool)",
		Example: `  coagent8 consult --backend claude --workspace "$PWD" "Is this locking scheme safe?"
  git diff | coagent8 consult --backend codex --workspace "$PWD" -`,
		Args: wantArgs("QUESTION"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.consult(cmd, o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.backend, "backend", "auto", "claude, codex, agy or auto")
	f.StringVar(&o.workspace, "workspace", "", "workspace directory; a relative path is taken from the current directory (default: the current directory)")
	f.StringVar(&o.model, "model", "", "model id (default: the backend's default)")
	f.StringVar(&o.effort, "effort", "", "reasoning effort: none, minimal, low, medium, high, xhigh, max")
	f.StringVar(&o.taskType, "task-type", "", "architecture, debug or implementation")
	f.StringVar(&o.session, "session", "", "continue this session handle")
	f.StringVar(&o.mode, "session-mode", "none", "new, auto or none: none (the terminal default) keeps no history; new starts a session to continue with --session; auto reuses a recent idle one")
	f.DurationVar(&o.timeout, "timeout", 0, "absolute deadline, 100ms to 30m (0 = 15m)")
	f.StringSliceVar(&o.files, "file", nil, "file the backend should read, relative to the workspace (repeatable; only the name is sent)")
	f.BoolVar(&o.asJSON, "json", false, "print the structured result as JSON")
	return cmd
}

func (a *app) consult(cmd *cobra.Command, o *consultOptions, question string) error {
	if err := o.validate(); err != nil {
		return err
	}
	if question == "-" {
		b, err := io.ReadAll(io.LimitReader(a.io.In, 4<<20+1))
		if err != nil {
			return fault.Wrap(fault.InvalidInput, "stdin.read", "could not read the question from stdin", err)
		}
		question = string(b)
	}
	if strings.TrimSpace(question) == "" {
		return badUsage("args.empty", "the question is empty")
	}
	ws, err := a.consultWorkspace(o.workspace)
	if err != nil {
		return err
	}
	o.workspace = ws
	st, err := a.build(cmd.Context())
	if err != nil {
		return err
	}
	defer st.close()
	// The same governed path as the MCP consult tool; a terminal cannot
	// show an approval form, so a model that needs one is refused.
	res := st.gov.Run(cmd.Context(), governor.Turn{Consent: st.consent.Refusal(), Request: turn.Request{
		Backend: o.backend, Workspace: o.workspace, Model: o.model, Effort: o.effort,
		Prompt:        turn.ConsultPrompt(turn.ConsultInput{Proposal: question, TaskType: o.taskType, ContextFiles: o.files}),
		SessionHandle: o.session, SessionMode: o.mode, Timeout: o.timeout,
		Progress: func(msg string) { fmt.Fprintf(a.io.Err, "coagent8: %s\n", msg) },
	}})
	return a.printOutcome(res.Outcome, o.asJSON)
}

func (a *app) printOutcome(out turn.Outcome, asJSON bool) error {
	if asJSON {
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintln(a.io.Out, string(b))
	} else if out.Error == nil {
		fmt.Fprintln(a.io.Out, out.Output)
		fmt.Fprintln(a.io.Err, strings.TrimSpace(strings.TrimPrefix(mcpserver.Text(out), out.Output)))
	}
	if out.Error != nil {
		fe := fault.New(fault.Code(out.Error.Code), out.Error.Reason, out.Error.Message)
		return fe
	}
	return nil
}
