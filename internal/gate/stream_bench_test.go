package gate

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/providertest"
)

// BenchmarkStreamedAnswer is issue 18's response-check target end to end:
// a 1 MiB answer (100-byte text deltas) fetched by a client through the
// real gate, once with the gate as it ships and once with the response
// check taken out (the stream only metered, as before issue 18 scope 2).
// The two paths alternate request by request on one gate, so machine load
// hits both alike; "check-loss-%" is the median over request pairs of the
// check's cost as a share of the unchecked path's throughput (target < 5);
// "check-cpu-%" is the same from the process's CPU time (client, gate and
// upstream share it), which machine load disturbs less.
//
// Upstreams: "double" is the local Anthropic double (it renders every event
// with encoding/json and flushes it); "replay" sends the double's recorded
// bytes again, one write and flush per event, so the gate and not the
// double is the slower side (the check's worst case for a stream of small
// events); "bulk" sends them in 32 KiB writes, as no provider streams, to
// show the check's cost where the relay itself costs least.
// docs/PERFORMANCE.md, "Response check".
func BenchmarkStreamedAnswer(b *testing.B) {
	text := strings.Repeat("func main() { fmt.Println(\"hello\") } // ", 27000)[:1<<20]
	double := providertest.NewAnthropic(b, providertest.Options{Default: providertest.Reply{
		Text: text, Chunks: len(text) / 100, OutputTokens: 300_000}})
	raw := record(b, double.URL())
	replay, bulk := replayServer(b, raw, 0), replayServer(b, raw, 32<<10)
	for _, up := range []struct{ name, url string }{{"double", double.URL()}, {"replay", replay.URL}, {"bulk", bulk.URL}} {
		b.Run(up.name, func(b *testing.B) { benchStream(b, up.url) })
	}
}

func benchStream(b *testing.B, upstream string) {
	f := newFixture(b, func(o *Options) { o.Upstreams[Anthropic] = upstream })
	var unchecked atomic.Bool
	proxy := f.gate.proxies[Anthropic]
	shipped := proxy.ModifyResponse
	proxy.ModifyResponse = func(resp *http.Response) error {
		if !unchecked.Load() {
			return shipped(resp)
		}
		a := resp.Request.Context().Value(admKey{}).(*admission)
		resp.Body = &meteredBody{rc: resp.Body, g: f.gate, a: a, m: meter{provider: Anthropic, stream: true}}
		return nil
	}
	s := spec(Anthropic)
	s.MaxRequests = 1 << 30
	_, phantom := f.grant(s)
	var cpu [2]time.Duration // process CPU (client, gate, upstream) per path: checked, unchecked
	fetch := func(plain bool) time.Duration {
		unchecked.Store(plain)
		start, cpu0 := time.Now(), cpuTime()
		defer func() { cpu[map[bool]int{false: 0, true: 1}[plain]] += cpuTime() - cpu0 }()
		resp := f.call(Anthropic, phantom, s.Model, true)
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || n < 1<<20 {
			b.Fatalf("status %d, %d bytes, %v", resp.StatusCode, n, err)
		}
		return time.Since(start)
	}
	fetch(false) // warm both paths
	fetch(true)
	var checked, plain time.Duration
	var loss []float64
	b.SetBytes(2 << 20)
	for i := 0; b.Loop(); i++ {
		var c, p time.Duration
		if i%2 == 0 { // alternate which path goes first
			c, p = fetch(false), fetch(true)
		} else {
			p, c = fetch(true), fetch(false)
		}
		checked, plain = checked+c, plain+p
		loss = append(loss, 100*(1-float64(p)/float64(c)))
	}
	slices.Sort(loss)
	n := float64(len(loss))
	b.ReportMetric(float64(plain)/n/1e6, "unchecked-ms/answer")
	b.ReportMetric(float64(checked)/n/1e6, "checked-ms/answer")
	b.ReportMetric(loss[len(loss)/2], "check-loss-%")
	b.ReportMetric(100*(1-float64(cpu[1])/float64(cpu[0])), "check-cpu-%")
}

// record returns the raw SSE stream the double at url answers.
func record(b *testing.B, url string) []byte {
	body := `{"model":"claude-sonnet-4-5","max_tokens":1000,"stream":true,"messages":[{"role":"user","content":"x"}]}`
	req, _ := http.NewRequest("POST", url+"/v1/messages?beta=true", strings.NewReader(body))
	req.Header.Set("X-Api-Key", realKey(Anthropic))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("record: status %d, %v", resp.StatusCode, err)
	}
	return raw
}

// replayServer answers every request with stream, one write and flush per
// SSE event, or per chunk bytes when chunk > 0.
func replayServer(b *testing.B, stream []byte, chunk int) *httptest.Server {
	events := bytes.SplitAfter(stream, []byte("\n\n"))
	if chunk > 0 {
		events = slices.Collect(slices.Chunk(stream, chunk))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for _, e := range events {
			if _, err := w.Write(e); err != nil {
				return
			}
			rc.Flush()
		}
	}))
	b.Cleanup(srv.Close)
	return srv
}
