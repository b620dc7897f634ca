package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/coagent8/coagent8/internal/admission"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/job"
)

// newAdmitCmd is `coagent8 admit JOB` (issue 16 scope 5): the user applies
// a job's quarantined candidate to the checkout, all or nothing. Only a
// person at a terminal (or the operator dashboard) admits: no MCP tool,
// argument or text does.
func newAdmitCmd(a *app) *cobra.Command {
	var o struct {
		workspace string
		ack       []string
	}
	c := &cobra.Command{
		Use:   "admit JOB",
		Short: "Apply a delegate job's candidate patch to your checkout (all or nothing); see `coagent8 jobs JOB` first",
		Args:  wantArgs("JOB"),
		RunE: func(cmd *cobra.Command, args []string) error {
			// A typo (--ack taint) is refused before anything is opened,
			// not later as an unacknowledged taint.
			if err := admission.CheckAck(o.ack); err != nil {
				return fault.From(err).With("flag", "ack")
			}
			ws, err := a.jobWorkspace(o.workspace)
			if err != nil {
				return err
			}
			return a.withJobs(cmd.Context(), func(_ *job.Store, adm *admission.Admitter) error {
				res, err := adm.Admit(cmd.Context(), admission.Request{Job: args[0], Workspace: ws, Actor: terminalActor(), Ack: o.ack})
				if err != nil {
					return err
				}
				return a.printJSON(struct {
					Job      string   `json:"job"`
					Digest   string   `json:"digest"`
					Paths    []string `json:"paths"`
					ThreeWay bool     `json:"three_way"`
				}{res.Job, res.Digest, res.Paths, res.ThreeWay})
			})
		},
	}
	c.Flags().StringVar(&o.workspace, "workspace", "", "the checkout to admit into (default: the current directory); must be the job's")
	c.Flags().StringSliceVar(&o.ack, "ack", nil, "acknowledge a reason admission otherwise refuses: tainted (after reading the findings)")
	return c
}

// newRejectCmd is `coagent8 reject JOB`: discard a job's candidate.
func newRejectCmd(a *app) *cobra.Command {
	var workspace string
	c := &cobra.Command{
		Use:   "reject JOB",
		Short: "Discard a delegate job's candidate patch",
		Args:  wantArgs("JOB"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := a.jobWorkspace(workspace)
			if err != nil {
				return err
			}
			return a.withJobs(cmd.Context(), func(_ *job.Store, adm *admission.Admitter) error {
				if err := adm.Reject(cmd.Context(), args[0], ws, terminalActor()); err != nil {
					return err
				}
				return a.printJSON(struct {
					Job   string `json:"job"`
					State string `json:"state"`
				}{args[0], job.Rejected.String()})
			})
		},
	}
	c.Flags().StringVar(&workspace, "workspace", "", "the job's checkout (default: the current directory)")
	return c
}

// jobWorkspace is --workspace, else the current directory, made absolute
// by [app.absWorkspace].
func (a *app) jobWorkspace(flag string) (string, error) {
	if flag == "" {
		flag = "."
	}
	return a.absWorkspace(flag)
}

// absWorkspace makes a terminal --workspace absolute: a relative path is
// taken from the current directory, as consult always did and as a
// shell user expects (`--workspace .`); admit, reject, delegate and jobs
// refused one instead (jobs once printed [] for a relative filter,
// issue 18 item 6: an absolute filter fixes that too). The MCP tools'
// workspace_path stays absolute-only. It fails INVALID_INPUT
// workspace.relative only when the current directory cannot be read.
func (a *app) absWorkspace(ws string) (string, error) {
	if filepath.IsAbs(ws) {
		return filepath.Clean(ws), nil
	}
	cwd := a.cwd()
	if cwd == "" {
		return "", fault.New(fault.InvalidInput, "workspace.relative",
			fmt.Sprintf("--workspace %s is relative and the current directory cannot be read: give an absolute path", fault.QuoteInput(ws))).With("flag", "workspace")
	}
	return filepath.Join(cwd, ws), nil
}
