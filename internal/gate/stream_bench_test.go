package gate

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/providertest"
)

// BenchmarkStreamedAnswer is issue 18's response-check target end to end:
// a 1 MiB answer streamed by the local Anthropic double (100-byte text
// deltas, one flush per event, as a real provider streams) fetched by a
// client through the real gate, once with the gate as it ships and once
// with the response check taken out (the stream only metered, as before
// issue 18 scope 2). The two paths alternate request by request on one
// gate, so machine load hits both alike; "check-loss-%" is the check's
// cost as a share of the unchecked path's throughput (target < 5).
// docs/PERFORMANCE.md, "Response check".
func BenchmarkStreamedAnswer(b *testing.B) {
	text := strings.Repeat("func main() { fmt.Println(\"hello\") } // ", 27000)[:1<<20]
	double := providertest.NewAnthropic(b, providertest.Options{Default: providertest.Reply{
		Text: text, Chunks: len(text) / 100, OutputTokens: 300_000}})
	f := newFixture(b, func(o *Options) { o.Upstreams[Anthropic] = double.URL() })
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
	fetch := func(plain bool) time.Duration {
		unchecked.Store(plain)
		start := time.Now()
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
	b.SetBytes(2 << 20)
	i := 0
	for b.Loop() {
		first := i%2 == 0 // alternate which path goes first
		i++
		if first {
			checked += fetch(false)
			plain += fetch(true)
		} else {
			plain += fetch(true)
			checked += fetch(false)
		}
	}
	b.ReportMetric(float64(plain)/float64(i)/1e6, "unchecked-ms/answer")
	b.ReportMetric(float64(checked)/float64(i)/1e6, "checked-ms/answer")
	b.ReportMetric(100*(1-float64(plain)/float64(checked)), "check-loss-%")
}
