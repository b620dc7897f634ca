package agy

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/config"
)

// TestMain lets the test binary play agy: started through a symlink named
// "agy", it replays the script in $GEMINI_CLI_HOME/script.json and records
// its argv, stdin and environment to $GEMINI_CLI_HOME/record.json.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "agy" {
		os.Exit(runFake())
	}
	os.Exit(m.Run())
}

// script is what the fake prints.
type script struct {
	Stdout []string `json:"stdout"`
	Stderr string   `json:"stderr"`
	Exit   int      `json:"exit"`
	// SleepMs makes the fake hang after its output (cancel and deadline).
	SleepMs int `json:"sleepMs"`
}

// record is what the fake saw.
type record struct {
	Args  []string `json:"args"`
	Stdin string   `json:"stdin"`
	Env   []string `json:"env"`
}

func runFake() int {
	dir := os.Getenv("GEMINI_CLI_HOME")
	in, _ := io.ReadAll(os.Stdin)
	rec, _ := json.Marshal(record{Args: os.Args[1:], Stdin: string(in), Env: os.Environ()})
	if err := os.WriteFile(filepath.Join(dir, "record.json"), rec, 0o600); err != nil {
		return 97
	}
	b, err := os.ReadFile(filepath.Join(dir, "script.json"))
	var s script
	if err != nil || json.Unmarshal(b, &s) != nil {
		return 98
	}
	for _, l := range s.Stdout {
		os.Stdout.WriteString(l + "\n")
	}
	os.Stderr.WriteString(s.Stderr)
	time.Sleep(time.Duration(s.SleepMs) * time.Millisecond)
	return s.Exit
}

// fake is one scripted agy installation.
type fake struct {
	t    *testing.T
	home string // GEMINI_CLI_HOME
	env  config.Env
}

func newFake(t *testing.T, s script) *fake {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "agy")
	if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	f := &fake{t: t, home: t.TempDir()}
	b, _ := json.Marshal(s)
	if err := os.WriteFile(filepath.Join(f.home, "script.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	f.env = config.FromList([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "AGY_PATH=" + bin,
		"GEMINI_CLI_HOME=" + f.home, "GEMINI_API_KEY=AIza" + strings.Repeat("Q", 35)})
	return f
}

// recorded returns what the fake saw, or ok=false if it never ran.
func (f *fake) recorded() (record, bool) {
	b, err := os.ReadFile(filepath.Join(f.home, "record.json"))
	if err != nil {
		return record{}, false
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		f.t.Fatal(err)
	}
	return r, true
}

// ev marshals one stream-json event.
func ev(v map[string]any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
