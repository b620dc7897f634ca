package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/redact/redacttest"
)

func runRedact(t *testing.T, in io.Reader, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := config.FromList([]string{"HOME=/home/tester"})
	code := MainEnv(context.Background(), append([]string{"redact"}, args...), Stdio{In: in, Out: &out, Err: &errb}, env)
	return out.String(), errb.String(), code
}

func TestRedactCommand(t *testing.T) {
	var in, want strings.Builder
	for _, c := range redacttest.Canaries() {
		in.WriteString("line " + c.Text + ".\n")
		want.WriteString("line " + c.Want + ".\n")
	}
	plain := "const token = getToken();\npassword: hunter2\n/home/tester/x\n"
	out, errOut, code := runRedact(t, strings.NewReader(in.String()+plain))
	if code != 0 || out != want.String()+plain {
		t.Errorf("answer profile: code %d, stderr %q\ngot:\n%s\nwant:\n%s", code, errOut, out, want.String()+plain)
	}
	out, _, code = runRedact(t, strings.NewReader(plain), "--profile", "diagnostic")
	if wantDiag := "const token = getToken();\npassword: [REDACTED:secret]\n~/x\n"; code != 0 || out != wantDiag {
		t.Errorf("diagnostic profile: code %d, got %q, want %q", code, out, wantDiag)
	}
	redacttest.AssertNoLeak(t, []byte(out), redacttest.All())
}

// TestRedactCommandStreams feeds stdin one byte at a time through a pipe
// and checks that output arrives before stdin closes.
func TestRedactCommandStreams(t *testing.T) {
	pr, pw := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- MainEnv(context.Background(), []string{"redact"}, Stdio{In: pr, Out: outW, Err: io.Discard}, config.FromList(nil))
		outW.Close()
	}()
	go func() {
		for _, b := range []byte("hello world, ") {
			pw.Write([]byte{b})
		}
	}()
	buf := make([]byte, 64)
	n, err := io.ReadAtLeast(outR, buf, len("hello world, "))
	if err != nil || string(buf[:n]) != "hello world, " {
		t.Fatalf("no streamed output before EOF: %q, %v", buf[:n], err)
	}
	pw.Write([]byte("then more"))
	pw.Close()
	rest, _ := io.ReadAll(outR)
	if code := <-done; code != 0 || string(buf[:n])+string(rest) != "hello world, then more" {
		t.Errorf("code %d, output %q", code, string(buf[:n])+string(rest))
	}
}

func TestRedactCommandBadProfile(t *testing.T) {
	_, errOut, code := runRedact(t, strings.NewReader(""), "--profile", "nope")
	if code != ExitUsage || !strings.Contains(errOut, "INVALID_INPUT") || !strings.Contains(errOut, `unknown --profile "nope"`) {
		t.Errorf("code %d, stderr %q; want %d and INVALID_INPUT naming the value given", code, errOut, ExitUsage)
	}
}
