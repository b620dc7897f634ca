package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestProtocolPipedInputAnswersEverything (issue 18 item 1): requests
// written at once and stdin closed, as `printf … | coagent8` does, are
// all answered in order before the server exits 0; the SDK used to
// cancel them at EOF and drop the answers, and could handle initialized
// before initialize.
func TestProtocolPipedInputAnswersEverything(t *testing.T) {
	input := strings.Join([]string{initLine,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`}, "\n") + "\n"
	environ := env(t, "http://127.0.0.1:9", "COAGENT8_DEBUG=1")
	for i := range 20 {
		cmd := exec.Command(binary)
		cmd.Env = environ
		cmd.Stdin = strings.NewReader(input)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("run %d: %v; stderr:\n%s", i, err, stderr.Bytes())
		}
		var got []string
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m struct {
				ID     any             `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("run %d: unparsable line %q", i, sc.Text())
			}
			kind := "result"
			if m.Result == nil {
				kind = "error " + string(m.Error)
			}
			got = append(got, fmt.Sprint(m.ID)+" "+kind)
		}
		if diff := cmp.Diff([]string{"1 result", "2 result"}, got); diff != "" {
			t.Fatalf("run %d: responses (-want +got):\n%s\nstderr:\n%s", i, diff, stderr.Bytes())
		}
		if s := stderr.String(); strings.Contains(s, "level=ERROR") {
			t.Fatalf("run %d: logged an error:\n%s", i, s)
		}
	}
}
