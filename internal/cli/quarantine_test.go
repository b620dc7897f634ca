package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/job"
	"github.com/coagent8/coagent8/internal/store"
)

// TestQuarantine (issue 16 scope 7): a succeeded job with a live grant
// in a real gate is quarantined from the terminal: its grant is revoked
// (a second revoke finds nothing live), the job is tainted with the
// evidence, a compromise event is recorded, admit without --ack tainted is
// refused and writes nothing, admit with it applies the candidate.
func TestQuarantine(t *testing.T) {
	env, state := gateEnv(t, "")
	ws := newWorkspace(t)
	id := seedJob(t, env, ws, "b.txt", "b\n", "done")
	grantJob(t, env, id)
	code, out, errs := runCLI(t, env, "", "quarantine", id)
	var res struct {
		Job, State string
		Evidence   struct {
			Trigger       string   `json:"trigger"`
			PriorState    string   `json:"prior_state"`
			RevokedGrants []string `json:"revoked_grants"`
			TreeEnded     bool     `json:"tree_ended"`
		}
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("quarantine: exit %d, out %q, err %q", code, out, errs)
	}
	if res.State != "tainted" || res.Evidence.Trigger != "operator" || res.Evidence.PriorState != "succeeded" ||
		len(res.Evidence.RevokedGrants) != 1 || res.Evidence.TreeEnded {
		t.Errorf("quarantine result %+v", res)
	}
	_, out, _ = runGate(t, env, "revoke", "--job", id)
	var again struct{ Revoked []string }
	json.Unmarshal([]byte(out), &again)
	if len(again.Revoked) != 0 {
		t.Errorf("a grant of the quarantined job was still live: %v", again.Revoked)
	}
	ev, _ := os.ReadFile(filepath.Join(state, "events.jsonl"))
	if !strings.Contains(string(ev), `"quarantine.compromise"`) {
		t.Errorf("no compromise event in events.jsonl:\n%s", ev)
	}

	var got []string
	for _, args := range [][]string{
		{"admit", id, "--workspace", ws},
		{"admit", id, "--workspace", ws, "--ack", "tainted"},
		{"quarantine", "job_none"},
	} {
		code, out, errs := runCLI(t, env, "", args...)
		got = append(got, strings.Join(args[:1], "")+":"+outcome(code, out+errs))
		if args[len(args)-1] == ws {
			if _, err := os.Stat(filepath.Join(ws, "b.txt")); err == nil {
				t.Errorf("refused admission of a quarantined job wrote b.txt")
			}
		}
	}
	want := []string{"admit:refused admission.taint_unacknowledged", "admit:ok", "quarantine:usage job.unknown"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("after quarantine (-want +got):\n%s", d)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "b.txt")); string(b) != "b\n" {
		t.Errorf("b.txt after acknowledged admission = %q", b)
	}
}

// outcome is "ok", or the exit's kind and the first known reason in text.
func outcome(code int, text string) string {
	switch code {
	case ExitOK:
		return "ok"
	}
	kind := map[int]string{ExitRefused: "refused", ExitUsage: "usage"}[code]
	for _, r := range []string{"admission.taint_unacknowledged", "job.unknown", "quarantine.revoke"} {
		if strings.Contains(text, r) {
			return kind + " " + r
		}
	}
	return kind + " " + text
}

// TestQuarantineFailedNoCandidate: a job that failed with no candidate,
// then quarantined from the terminal, is refused by admit as
// admission.no_candidate, the real cause, with or without --ack tainted;
// it asked for the acknowledgement first.
func TestQuarantineFailedNoCandidate(t *testing.T) {
	env, _ := gateEnv(t, "")
	ws := newWorkspace(t)
	id := seedFailedJob(t, env, ws)
	if code, out, errs := runCLI(t, env, "", "quarantine", id); code != ExitOK || !strings.Contains(out, `"tainted"`) {
		t.Fatalf("quarantine: exit %d, out %q, err %q", code, out, errs)
	}
	var got []string
	for _, args := range [][]string{{"admit", id, "--workspace", ws}, {"admit", id, "--workspace", ws, "--ack", "tainted"}} {
		code, out, errs := runCLI(t, env, "", args...)
		got = append(got, fmt.Sprintf("%d %v", code, strings.Contains(out+errs, "(reason: admission.no_candidate)")))
	}
	if d := cmp.Diff([]string{fmt.Sprint(ExitUsage, " true"), fmt.Sprint(ExitUsage, " true")}, got); d != "" {
		t.Errorf("admit after quarantine (-want +got):\n%s", d)
	}
}

// seedFailedJob stores a delegate job for ws that failed before it had a
// candidate.
func seedFailedJob(t *testing.T, env config.Env, ws string) string {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(env.StateDir(), "state.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	jobs, err := job.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	j, err := jobs.Create(ctx, job.Spec{Workspace: ws, Base: gitIn(t, ws, "rev-parse", "HEAD"), Backend: "claude", Model: "claude-sonnet-5-5"})
	if err != nil {
		t.Fatal(err)
	}
	if err := jobs.Transition(ctx, j.ID, []job.State{job.Running}, job.Failed, "delegate.agent_failed"); err != nil {
		t.Fatal(err)
	}
	return j.ID
}
