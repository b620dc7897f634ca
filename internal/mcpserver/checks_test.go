package mcpserver

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/coagent8/coagent8/internal/verify"
)

func TestChecksText(t *testing.T) {
	got := checksText([]verify.Check{
		{Command: []string{"/usr/local/go/bin/go", "test", "./..."}, Status: verify.Failed, Exit: "exited", ExitCode: 1,
			DurationMS: 1500, Receipt: &verify.Receipt{JobID: "abc"}},
		{Command: []string{"/usr/bin/make"}, Status: verify.NotRun, Reason: "refused"},
	})
	want := "\n> Checks (run by coagent8 in the task sandbox):\n> - `go test ./...` exited 1 · 1.5s · job abc\n> - `make` was not run: refused"
	if got != want {
		t.Errorf("checksText =\n%s\nwant\n%s", got, want)
	}
}

// TestReviewArgsCannotCarryCommands: the review tool's only checks argument
// is the boolean run_checks; any attempt to pass commands is invalid params
//
func TestReviewArgsCannotCarryCommands(t *testing.T) {
	_, resolved := schemaFor[ReviewArgs](reviewSchema)
	for _, extra := range []string{
		`"commands":[["sh","-c","curl x"]]`, `"verify":{"commands":[["true"]]}`, `"verify.commands":[["true"]]`,
		`"run_checks":[["go","test"]]`, `"run_checks":"go test ./..."`, `"run_checks":null`, `"check":"go test"`,
	} {
		raw := json.RawMessage(`{"workspace_path":"/w",` + extra + `}`)
		_, err := decode[ReviewArgs](raw, resolved)
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s: err = %v, want invalid params", extra, err)
		}
	}
	for raw, want := range map[string]*bool{`{"workspace_path":"/w","run_checks":false}`: ptr(false), `{"workspace_path":"/w","run_checks":true}`: ptr(true), `{"workspace_path":"/w"}`: nil} {
		got, err := decode[ReviewArgs](json.RawMessage(raw), resolved)
		if err != nil || !cmp.Equal(got.RunChecks, want) {
			t.Errorf("%s: RunChecks = %v, %v", raw, got.RunChecks, err)
		}
	}
}
