package egress

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/egress/lineage"
)

// benchBody is a ~100 KB Messages body of ordinary (unlabelled) text.
func benchBody(b *testing.B) []byte {
	var sb strings.Builder
	for i := 0; sb.Len() < 100_000; i++ {
		sb.WriteString("func handler" + string(rune('a'+i%26)) + "(w http.ResponseWriter, r *http.Request) { /* line */ }\n")
	}
	body, err := json.Marshal(map[string]any{"model": "claude-test", "max_tokens": 1000,
		"messages": []any{map[string]any{"role": "user", "content": sb.String()}}})
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// BenchmarkFingerprint is lineage scanning throughput of a 100 KB body.
func BenchmarkFingerprint(b *testing.B) {
	x := lineage.NewIndex()
	x.Add(0, []byte(dealNotes+internalNotes))
	body := benchBody(b)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := x.Scan(body, true, false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecide is the full decision of a 100 KB raw-eligible body:
// lineage, credentials, patterns, thresholds and the durable claim. It
// reports p50/p99 latency per request.
func BenchmarkDecide(b *testing.B) {
	c := baseConfig()
	c.Labels = c.Labels[:3] // path labels only; patterns are opt-in (BenchmarkClassifyPattern)
	c.Purposes[ProviderRequest] = PurposeConfig{MaxUses: 1 << 40, MaxBytes: 1 << 60}
	f := newFixtureB(b, c)
	body := benchBody(b)
	x := Transmission{Job: "j", Purpose: ProviderRequest, Target: portal(), Body: body, JSON: true}
	b.SetBytes(int64(len(body)))
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := f.d.Seal(context.Background(), x); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	report(b, lat)
}

// BenchmarkClassify is the decision without the durable claim (the
// in-memory part) for the same body.
func BenchmarkClassify(b *testing.B) {
	c := baseConfig()
	c.Labels = c.Labels[:3]
	classifyBench(b, c)
}

// BenchmarkClassifyPattern adds one RE2 content pattern label (\b\d{3}-\d{2}-\d{4}\b).
func BenchmarkClassifyPattern(b *testing.B) { classifyBench(b, baseConfig()) }

func classifyBench(b *testing.B, c Config) {
	f := newFixtureB(b, c)
	body := benchBody(b)
	x := Transmission{Job: "j", Purpose: ProviderRequest, Target: portal(), Body: body, JSON: true}
	var lat []time.Duration
	for b.Loop() {
		start := time.Now()
		if _, _, err := f.d.Decide(context.Background(), x); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	report(b, lat)
}

func report(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
