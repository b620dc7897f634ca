package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/providertest"
)

// TestGateServeStopLetsExchangesSettle: a stop signal (the context
// main cancels on SIGINT/SIGTERM) while a streamed answer is in flight
// lets it finish within the grace, or cuts the client's connection after
// it; either way the attempt is settled before `gate serve` returns —
// the cut one from the usage the gate still reads to (its drain), as for
// any client that left. When the server stopped with Close alone the
// short answer was cut and its attempt stayed open (red team 2026-12-02).
func TestGateServeStopLetsExchangesSettle(t *testing.T) {
	tests := []struct {
		name      string
		delay     time.Duration // between the answer's 30 events
		wantWhole bool
		wantState string
	}{
		{"answer ends within the grace", 20 * time.Millisecond, true, "completed"},
		{"answer cut after the grace", stopGrace / 20, false, "completed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { stopMidStream(t, tt.delay, tt.wantWhole, tt.wantState) })
	}
}

func stopMidStream(t *testing.T, delay time.Duration, wantWhole bool, wantState string) {
	up := providertest.NewAnthropic(t, providertest.Options{Default: providertest.Reply{Text: strings.Repeat("word ", 30),
		Chunks: 30, ChunkDelay: delay}})
	env, _ := gateEnv(t, "")
	code, out, errs := runGate(t, env, "grant", "--provider", "anthropic", "--model", gateModel, "--job", "j-stop",
		"--secret", "env:REAL_ANTHROPIC", "--max-requests", "5", "--max-tokens", "1000000", "--max-usd", "10",
		"--price-input", "3", "--price-output", "15")
	var g struct{ ID, Phantom string }
	if code != ExitOK || json.Unmarshal([]byte(out), &g) != nil || g.Phantom == "" {
		t.Fatalf("grant: exit %d %q: %s", code, out, errs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sout, serr := &syncBuffer{}, &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- MainEnv(ctx, []string{"gate", "serve", "--listen", "127.0.0.1:0", "--unsafe-loopback-upstream",
			"anthropic=" + up.URL()}, Stdio{In: strings.NewReader(""), Out: sout, Err: serr}, env)
	}()
	defer cancel()
	url := waitListening(t, sout, serr)

	body, _ := json.Marshal(map[string]any{"model": gateModel, "max_tokens": 64, "stream": true,
		"messages": []any{map[string]any{"role": "user", "content": "hello"}}})
	req, _ := http.NewRequest("POST", url+"/v1/messages", bytes.NewReader(body))
	req.Header.Set("X-Api-Key", g.Phantom)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if _, err := r.ReadString('\n'); err != nil || resp.StatusCode != 200 {
		t.Fatalf("first line: %v (status %d)", err, resp.StatusCode)
	}
	cancel() // the stop signal, mid-stream
	rest, err := io.ReadAll(r)
	if whole := err == nil && strings.Contains(string(rest), "message_stop"); whole != wantWhole {
		t.Errorf("answer whole after the stop: %t, want %t (%v)", whole, wantWhole, err)
	}
	select {
	case code := <-done:
		if code != ExitOK {
			t.Fatalf("gate serve exited %d: %s", code, serr.String())
		}
	case <-time.After(stopGrace + 5*time.Second):
		t.Fatal("gate serve did not stop")
	}
	code, out, errs = runGate(t, env, "inspect", g.ID)
	var in struct{ Attempts []struct{ State string } }
	if code != ExitOK || json.Unmarshal([]byte(out), &in) != nil {
		t.Fatalf("inspect: exit %d %q: %s", code, out, errs)
	}
	if len(in.Attempts) != 1 || in.Attempts[0].State != wantState {
		t.Errorf("attempts after the stop = %+v, want one %s", in.Attempts, wantState)
	}
}

// waitListening returns the URL `gate serve` printed on out.
func waitListening(t *testing.T, out, errb *syncBuffer) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var m map[string]string
		if json.Unmarshal([]byte(out.String()), &m) == nil && m["listening"] != "" {
			return m["listening"]
		}
	}
	t.Fatalf("gate serve did not start: %s", errb.String())
	return ""
}
