package cli

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/config"
)

func TestOperatorCommandRefusesNonLoopback(t *testing.T) {
	dir := t.TempDir()
	env := config.FromList([]string{"COAGENT8_DIR=" + dir, "HOME=" + t.TempDir(), "PATH=/nonexistent"})
	for _, addr := range []string{"0.0.0.0", "::", "192.0.2.7", "localhost"} {
		var out, errb bytes.Buffer
		code := MainEnv(context.Background(), []string{"operator", "--address", addr, "--port", "0"}, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, env)
		if code != ExitUsage || !strings.Contains(errb.String(), "operator.non_loopback") {
			t.Errorf("--address %s: exit %d, stderr %q", addr, code, errb.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "operator.credential")); err == nil {
		t.Error("a refused start wrote the credential")
	}
}

// operatorStderr is a goroutine-safe stderr.
type operatorStderr struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *operatorStderr) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *operatorStderr) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func TestOperatorCommandServesWithItsCredential(t *testing.T) {
	dir := t.TempDir()
	env := config.FromList([]string{"COAGENT8_DIR=" + dir, "HOME=" + t.TempDir(), "PATH=/nonexistent"})
	seeded := seedJob(t, config.FromList([]string{"COAGENT8_DIR=" + dir, "HOME=" + t.TempDir()}), newWorkspace(t), "n.txt", "n\n", "")
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var errb operatorStderr
	done := make(chan int, 1)
	go func() {
		done <- MainEnv(ctx, []string{"operator", "--port", "0"}, Stdio{In: strings.NewReader(""), Out: pw, Err: &errb}, env)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL printed: %v; stderr %q", err, errb.String())
	}
	go io.Copy(io.Discard, pr)
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`).FindString(line)
	if url == "" {
		t.Fatalf("printed %q", line)
	}
	var out, e2 bytes.Buffer
	if code := MainEnv(context.Background(), []string{"operator", "credential"}, Stdio{In: strings.NewReader(""), Out: &out, Err: &e2}, env); code != ExitOK {
		t.Fatalf("operator credential: exit %d %s", code, e2.String())
	}
	pass := regexp.MustCompile(`password: (\S+)`).FindStringSubmatch(out.String())
	if pass == nil || !strings.Contains(errb.String(), pass[1]) {
		t.Fatalf("credential %q not the one shown at first start (stderr %q)", out.String(), errb.String())
	}
	get := func(user, pw string) int {
		r, _ := http.NewRequest(http.MethodGet, url, nil)
		r.SetBasicAuth(user, pw)
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if s := get("operator", pass[1]); s != http.StatusOK {
		t.Errorf("with the credential: status %d", s)
	}
	r, _ := http.NewRequest(http.MethodGet, url+"candidates/"+seeded, nil)
	r.SetBasicAuth("operator", pass[1])
	if res, err := http.DefaultClient.Do(r); err != nil || res.StatusCode != http.StatusOK {
		t.Errorf("the seeded job's candidate page: %v %v", err, res)
	} else if b, _ := io.ReadAll(res.Body); !strings.Contains(string(b), `<span class="add">&#43;n</span>`) {
		t.Errorf("the candidate page does not show the job's diff (the job store is not wired): %.300s", b)
	}
	if s := get("operator", "wrong"); s != http.StatusUnauthorized {
		t.Errorf("wrong credential: status %d", s)
	}
	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("exit %d after cancel; stderr %q", code, errb.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("operator did not stop")
	}
	b, _ := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if !strings.Contains(string(b), "operator.auth_invalid") || strings.Contains(string(b), pass[1]) {
		t.Errorf("events.jsonl: want the failed login, never the credential: %s", b)
	}
}

func TestOperatorCredentialBeforeFirstStart(t *testing.T) {
	env := config.FromList([]string{"COAGENT8_DIR=" + t.TempDir(), "HOME=" + t.TempDir()})
	var out, errb bytes.Buffer
	code := MainEnv(context.Background(), []string{"operator", "credential"}, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, env)
	if code != ExitUsage || !strings.Contains(errb.String(), "operator.no_credential") {
		t.Fatalf("exit %d stderr %q", code, errb.String())
	}
}
