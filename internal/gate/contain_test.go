package gate

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/providertest"
)

// TestContainmentSignals: a gate-observed containment signal revokes
// every grant of the job and records one compromise event; a request
// a well-behaved CLI makes (Codex's WebSocket probe, an anonymous probe)
// revokes nothing (issue 18 scope 6).
func TestContainmentSignals(t *testing.T) {
	tests := []struct {
		name     string
		send     func(f *fixture, phantom, model string) *http.Response
		signal   string // "" = no containment
		perJobOf string // serve through a per-job gate of this job
	}{
		{"live phantom on an unadmitted route", func(f *fixture, ph, m string) *http.Response {
			return send(f, "POST", "/v1/complete", `{"model":"`+m+`"}`, map[string]string{"X-Api-Key": ph})
		}, SignalRoute, ""},
		{"credential in the body", func(f *fixture, ph, m string) *http.Response {
			return send(f, "POST", "/v1/messages", `{"model":"`+m+`","max_tokens":5,"messages":[{"role":"user","content":"ghp_`+strings.Repeat("z", 36)+`"}]}`,
				map[string]string{"X-Api-Key": ph})
		}, SignalCredential, ""},
		{"phantom used from a second job", func(f *fixture, ph, m string) *http.Response {
			return f.call(Anthropic, ph, m, true)
		}, SignalOtherJob, "job-other"},
		{"websocket probe", func(f *fixture, ph, _ string) *http.Response {
			return send(f, "GET", "/v1/responses", "", map[string]string{"X-Api-Key": ph, "Upgrade": "websocket", "Connection": "Upgrade"})
		}, "", ""},
		{"anonymous unadmitted route", func(f *fixture, _, m string) *http.Response {
			return send(f, "POST", "/v1/complete", `{"model":"`+m+`"}`, nil)
		}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			a, phantom := f.grant(spec(Anthropic))
			b, _ := f.grant(spec(OpenAI)) // same job
			other := spec(Anthropic)
			other.Job = "job-2"
			c, _ := f.grant(other)
			if tt.perJobOf != "" {
				f.perJob(t, tt.perJobOf)
			}
			readAll(t, tt.send(f, phantom, a.Model))
			wantState := Live
			if tt.signal != "" {
				wantState = Revoked
			}
			for _, id := range []string{a.ID, b.ID} {
				if g, _ := f.gate.Inspect(context.Background(), id); g.State != wantState {
					t.Errorf("grant %s of the job is %s, want %s", id, g.State, wantState)
				}
			}
			if g, _ := f.gate.Inspect(context.Background(), c.ID); g.State != Live {
				t.Errorf("another job's grant is %s", g.State)
			}
			var got []string
			for _, e := range f.events.Events() {
				if e.Type == TypeCompromise {
					got = append(got, e.Reason)
					if e.IDs["job"] != "job-1" || !strings.Contains(e.IDs["grants"], a.ID) {
						t.Errorf("compromise event %+v does not name the job and its grants", e)
					}
				}
			}
			if want := tt.signal; (want == "" && len(got) != 0) || (want != "" && (len(got) != 1 || got[0] != want)) {
				t.Errorf("compromise events %v, want [%s]", got, want)
			}
		})
	}
}

// perJob replaces the fixture's gate by a per-job gate of job on the
// same database.
func (f *fixture) perJob(t *testing.T, job string) {
	g, err := New(context.Background(), Options{DB: f.db, Key: f.gate.opts.Key, Egress: f.egress, Secrets: f.secrets,
		Credentials: f.gate.opts.Credentials, Events: f.events, Job: job,
		Upstreams: map[Provider]string{Anthropic: f.anth.URL(), OpenAI: f.oai.URL()}, UnsafeAllowLoopbackUpstream: true,
		WatchInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	f.gate = g
	f.srv.Config.Handler = g
}

func send(f *fixture, method, path, body string, hdr map[string]string) *http.Response {
	f.t.Helper()
	req, _ := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp
}

// TestRevokeJobCutsEveryStream: RevokeJob through a second gate on the
// same database (as `coagent8 gate revoke --job` does) cuts three
// concurrent streams of one job within a second; another job's stream
// runs on.
func TestRevokeJobCutsEveryStream(t *testing.T) {
	f := newFixture(t, nil)
	f.anth.Script(providertest.Reply{Chunks: 60, ChunkDelay: 50 * time.Millisecond, Text: strings.Repeat("r", 120)})
	var phantoms []string
	for range 3 {
		_, ph := f.grant(spec(Anthropic))
		phantoms = append(phantoms, ph)
	}
	other := spec(Anthropic)
	other.Job = "job-2"
	og, otherPh := f.grant(other)
	second, err := New(context.Background(), Options{DB: f.db, Key: f.gate.opts.Key, Egress: f.egress})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { second.Close() })

	var wg sync.WaitGroup
	durations := make([]time.Duration, 3)
	started := make(chan struct{}, 3)
	revoked := make(chan time.Time, 1)
	for i, ph := range phantoms {
		wg.Go(func() {
			resp := f.call(Anthropic, ph, og.Model, true)
			br := firstEvent(t, resp)
			started <- struct{}{}
			rest := readRest(br)
			resp.Body.Close()
			at := <-revoked
			revoked <- at
			durations[i] = time.Since(at)
			if strings.Contains(rest, "message_stop") {
				t.Errorf("stream %d ran to completion after revoke --job", i)
			}
		})
	}
	otherResp := f.call(Anthropic, otherPh, og.Model, true)
	for range 3 {
		<-started
	}
	ids, err := second.RevokeJob(context.Background(), "job-1")
	revoked <- time.Now()
	if err != nil || len(ids) != 3 {
		t.Fatalf("RevokeJob = %v, %v; want 3 grants", ids, err)
	}
	wg.Wait()
	for i, d := range durations {
		if d > time.Second {
			t.Errorf("stream %d survived revoke --job for %v", i, d)
		}
	}
	if rest := readAll(t, otherResp); !strings.Contains(rest, "message_stop") {
		t.Errorf("another job's stream was cut")
	}
}

func readRest(br *bufio.Reader) string {
	b, _ := io.ReadAll(br)
	return string(b)
}

// TestForJobContainsOtherJobsPhantom: a job's own handler (ForJob, what
// the delegate path serves each job's sandbox through) refuses a phantom
// of another job's grant grant.job and contains that job, as a per-job
// gate does; the job's own phantom is admitted. Before, every sandbox
// was served by the shared gate, which admitted any live phantom: one
// leaked from job A's sandbox into job B's ran on A's budget unnoticed.
func TestForJobContainsOtherJobsPhantom(t *testing.T) {
	f := newFixture(t, nil)
	a, leaked := f.grant(spec(Anthropic)) // job-1
	other := spec(Anthropic)
	other.Job = "job-2"
	b, own := f.grant(other)
	f.srv.Config.Handler = f.gate.ForJob("job-2")

	resp := f.call(Anthropic, leaked, a.Model, false)
	readAll(t, resp)
	if got := resp.Header.Get("X-Coagent8-Gate-Reason"); got != ReasonJob {
		t.Errorf("another job's phantom: reason %q, want %s", got, ReasonJob)
	}
	if g, _ := f.gate.Inspect(context.Background(), a.ID); g.State != Revoked {
		t.Errorf("the leaked phantom's job was not contained: grant %s", g.State)
	}
	var signals []string
	for _, e := range f.events.Events() {
		if e.Type == TypeCompromise {
			signals = append(signals, e.Reason)
		}
	}
	if len(signals) != 1 || signals[0] != SignalOtherJob {
		t.Errorf("compromise events %v, want [%s]", signals, SignalOtherJob)
	}
	if resp := f.call(Anthropic, own, b.Model, false); resp.StatusCode != http.StatusOK {
		t.Errorf("the job's own phantom: status %d (%s)", resp.StatusCode, readAll(t, resp))
	} else {
		readAll(t, resp)
	}
}
