package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/providertest"
)

// TestGateRevokeJobCutsStreams: `coagent8 gate revoke --job J` (this
// process) cuts three concurrent streams of job J served by a running
// `coagent8 gate serve` (another process) within 1 s; a stream of another
// job runs to its end (issue 18 scope 6).
func TestGateRevokeJobCutsStreams(t *testing.T) {
	env, state := gateEnv(t, "")
	anth := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Chunks: 80, ChunkDelay: 50 * time.Millisecond,
		Text: strings.Repeat("s", 160)}})
	var phantoms []string
	for range 3 {
		phantoms = append(phantoms, grantJob(t, env, "job-cut"))
	}
	other := grantJob(t, env, "job-keep")
	url := startGateProcess(t, []string{"COAGENT8_DIR=" + state, "HOME=" + t.TempDir(), "REAL_ANTHROPIC=" + gateRealKey()},
		"--unsafe-loopback-upstream", "anthropic="+anth.URL())

	var wg sync.WaitGroup
	started := make(chan struct{}, 3)
	ended := make([]time.Time, 3)
	complete := make([]bool, 3)
	for i, ph := range phantoms {
		wg.Go(func() {
			br, closeFn := openStream(t, url, ph)
			defer closeFn()
			started <- struct{}{}
			rest, _ := io.ReadAll(br)
			ended[i], complete[i] = time.Now(), strings.Contains(string(rest), "message_stop")
		})
	}
	keep, closeKeep := openStream(t, url, other)
	defer closeKeep()
	for range 3 {
		<-started
	}
	at := time.Now()
	code, out, errs := runGate(t, env, "revoke", "--job", "job-cut")
	var res struct{ Revoked []string }
	if code != ExitOK || json.Unmarshal([]byte(out), &res) != nil || len(res.Revoked) != 3 {
		t.Fatalf("revoke --job: exit %d, out %q, err %q", code, out, errs)
	}
	wg.Wait()
	for i := range 3 {
		if complete[i] || ended[i].Sub(at) > time.Second {
			t.Errorf("stream %d: completed %v, ended %v after revoke --job", i, complete[i], ended[i].Sub(at))
		}
	}
	if rest, _ := io.ReadAll(keep); !strings.Contains(string(rest), "message_stop") {
		t.Errorf("the other job's stream was cut")
	}
}

// TestGateRevokeArgs: exactly one of GRANT_ID and --job; --job names a
// job some grant names.
func TestGateRevokeArgs(t *testing.T) {
	env, _ := gateEnv(t, "")
	for _, args := range [][]string{{"revoke"}, {"revoke", "g_x", "--job", "j"}} {
		if code, _, _ := runGate(t, env, args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, ExitUsage)
		}
	}
	// A job id that no grant names is a mistake (a typo would look like
	// containment); a job whose grants have all ended already is not.
	code, _, errs := runGate(t, env, "revoke", "--job", "nothing-here")
	if code != ExitUsage || !strings.Contains(errs, `no grant names the job "nothing-here"`) || !strings.Contains(errs, "gate.unknown_job") {
		t.Errorf("revoke of a job without grants: exit %d, %s", code, errs)
	}
	grantJob(t, env, "ended-job")
	for i, want := range []string{`"revoked": [`, `"revoked": []`} {
		code, out, errs := runGate(t, env, "revoke", "--job", "ended-job")
		if code != ExitOK || !strings.Contains(out, want) {
			t.Errorf("revoke %d of a job with a grant: exit %d, %s %s; want %s", i+1, code, out, errs, want)
		}
	}
}

func grantJob(t *testing.T, env config.Env, job string) string {
	t.Helper()
	code, out, errs := runGate(t, env, "grant", "--provider", "anthropic", "--model", gateModel, "--job", job,
		"--max-requests", "5", "--max-tokens", "10000000", "--max-usd", "100", "--price-input", "3", "--price-output", "15")
	if code != ExitOK {
		t.Fatalf("grant: exit %d: %s", code, errs)
	}
	var g struct{ Phantom string }
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatal(err)
	}
	return g.Phantom
}

// openStream starts a streamed Messages request and returns its body
// after the first line.
func openStream(t *testing.T, url, phantom string) (*bufio.Reader, func()) {
	req, _ := http.NewRequest("POST", url+"/v1/messages", strings.NewReader(`{"model":"`+gateModel+`","max_tokens":64,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("X-Api-Key", phantom)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("stream: %v %v", resp, err)
		return bufio.NewReader(strings.NewReader("")), func() {}
	}
	br := bufio.NewReader(resp.Body)
	br.ReadString('\n')
	return br, func() { resp.Body.Close() }
}

// TestGateAttemptsInInspectAndAudit: a request through `gate serve` is
// one attempt: `gate inspect` lists it with its state and decision
// digest, `coagent8 audit` shows its settlement with the attempt state
// (issue 18 scope 4).
func TestGateAttemptsInInspectAndAudit(t *testing.T) {
	env, state := gateEnv(t, "")
	anth := providertest.NewAnthropic(t, providertest.Options{})
	code, out, errs := runGate(t, env, "grant", "--provider", "anthropic", "--model", gateModel, "--job", "job-att",
		"--max-requests", "5", "--max-tokens", "10000000", "--max-usd", "100", "--price-input", "3", "--price-output", "15")
	var g struct{ ID, Phantom string }
	if code != ExitOK || json.Unmarshal([]byte(out), &g) != nil {
		t.Fatalf("grant: exit %d: %s", code, errs)
	}
	url := startGateProcess(t, []string{"COAGENT8_DIR=" + state, "HOME=" + t.TempDir(), "REAL_ANTHROPIC=" + gateRealKey()},
		"--unsafe-loopback-upstream", "anthropic="+anth.URL())
	if resp := postMessages(t, url, g.Phantom, "hello"); resp.StatusCode != 200 {
		t.Fatalf("request: %d", resp.StatusCode)
	}
	var in struct {
		Attempts []struct{ State, Decision, Outcome string }
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, out, errs = runGate(t, env, "inspect", g.ID)
		if code != ExitOK || json.Unmarshal([]byte(out), &in) != nil {
			t.Fatalf("inspect: exit %d: %s %s", code, out, errs)
		}
		if len(in.Attempts) == 1 && in.Attempts[0].State == "completed" || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(in.Attempts) != 1 || in.Attempts[0].State != "completed" || !strings.HasPrefix(in.Attempts[0].Decision, "ed1:") {
		t.Fatalf("inspect attempts %+v, want one completed with its decision digest", in.Attempts)
	}
	var audit bytes.Buffer
	if code := MainEnv(context.Background(), []string{"audit"}, Stdio{In: strings.NewReader(""), Out: &audit, Err: io.Discard}, env); code != ExitOK {
		t.Fatalf("audit: exit %d", code)
	}
	if !strings.Contains(audit.String(), `"rule":"gate.attempt completed"`) || !strings.Contains(audit.String(), `"reason":"settled.usage"`) {
		t.Errorf("audit does not show the attempt:\n%s", audit.String())
	}
}
