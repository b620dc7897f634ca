package sandboxrun

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/sandbox"
)

// TestCheckHostPaths: relative or missing host paths are usage errors that
// name the flag and the path, with the sandbox admission's reason for them
// (sandbox.path); a relative command gets its absolute path suggested.
func TestCheckHostPaths(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name    string
		o       Options
		command string
		want    string // "" = accepted
	}{
		{"all good", Options{}, "/usr/bin/true", ""},
		{"relative command on PATH", Options{}, "true", `the command "true": give its absolute path (there is no PATH lookup), e.g. /usr/bin/true`},
		{"relative command not on PATH", Options{}, "no-such-c8-cmd", `the command "no-such-c8-cmd": give its absolute path (there is no PATH lookup)`},
		{"relative input", optsWith(func(o *Options) { o.spec.Input = "." }), "/usr/bin/true", `--input ".": must be an absolute path`},
		{"relative ro", optsWith(func(o *Options) { o.spec.ReadOnly = []string{"bin"} }), "/usr/bin/true", `--ro "bin": must be an absolute path`},
		{"missing artifacts-out", optsWith(func(o *Options) { o.spec.ArtifactsTo = dir + "/missing" }), "/usr/bin/true",
			`--artifacts-out "` + dir + `/missing": no such file or directory`},
		{"missing command", Options{}, "/usr/bin/no-such-c8-cmd", `the command "/usr/bin/no-such-c8-cmd": no such file or directory`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := checkHostPaths(tt.o, tt.command)
			var ue UsageError
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (!errors.As(err, &ue) || err.Error() != tt.want || ue.Reason != "sandbox.path"):
				t.Errorf("err = %v (reason %q); want usage error %q, reason sandbox.path", err, ue.Reason, tt.want)
			}
		})
	}
}

func optsWith(f func(*Options)) Options {
	var o Options
	f(&o)
	return o
}

// TestReceiptFile: an unwritable --receipt is a usage error before
// anything runs; --quiet does not suppress the file.
func TestReceiptFile(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "missing-dir", "r.json")
	_, err := openReceipt(bad)
	var ue UsageError
	if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), `--receipt "`+bad+`": `) || ue.Reason != "sandbox.receipt" {
		t.Errorf("openReceipt(%s) = %v; want a usage error naming the flag and path", bad, err)
	}
	if f, err := openReceipt(""); f != nil || err != nil {
		t.Errorf("no --receipt: %v %v", f, err)
	}
	good := filepath.Join(t.TempDir(), "r.json")
	f, err := openReceipt(good)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var errw strings.Builder
	if err := writeReceipt(Options{receipt: good, noReceipt: true}, sandboxReceiptForTest(), f, &errw); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(good); !strings.Contains(string(b), `"job_id": "j1"`) || errw.Len() != 0 {
		t.Errorf("--quiet --receipt: file %q, stderr %q; want the receipt in the file only", b, errw.String())
	}
}

func sandboxReceiptForTest() sandbox.Receipt {
	return sandbox.Receipt{JobID: "j1", Exit: sandbox.Exit{Class: sandbox.ExitExited}}
}
