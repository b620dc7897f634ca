package operator

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/event"
)

// Load of the page-latency benchmark (issue 17 performance): 1,000 jobs —
// each a task-sandbox run (admission and receipt events) with a gate grant
// under the same job id — and 100,000 egress decisions, 3 % refusals.
const (
	benchJobs      = 1000
	benchDecisions = 100000
)

func seedLoad(b *testing.B, o *owners) {
	b.Helper()
	for i := range benchJobs {
		id := fmt.Sprintf("job-%04d", i)
		o.grant(id, "claude-sonnet-5")
		o.event(event.Event{Type: event.TypeDecision, Reason: "sandbox.admitted", Rule: "sandbox", IDs: map[string]string{"job_id": id}})
		o.event(event.Event{Type: event.TypeExecution, Reason: "sandbox.run.exited", Rule: "sandbox",
			IDs: map[string]string{"job_id": id, "exit_code": "0"}, Detail: "tree_empty=true run_ms=120.0 memory_peak_bytes=4194304"})
	}
	o.use("job-0001", 4, 30000, 200000000)
	ctx := context.Background()
	tx, err := o.db.SQL().BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	st, err := tx.PrepareContext(ctx, `INSERT INTO egress_record(at, purpose, effect, reason, bytes, evidence) VALUES(?, ?, ?, ?, ?, ?)`)
	if err != nil {
		b.Fatal(err)
	}
	reasons := []string{"egress.credential", "egress.category", "egress.threshold", "egress.target", "egress.config_conflict"}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range benchDecisions {
		effect, reason := "allow", "egress.allowed"
		if i%33 == 0 {
			effect, reason = "deny", reasons[i%len(reasons)]
		}
		at := t0.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano)
		if _, err := st.ExecContext(ctx, at, "provider-request", effect, reason, 1000+i%5000, "ed1:"+strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

var benchPages = []string{"/", "/jobs", "/grants", "/egress", "/egress?effect=deny", "/events", "/sessions"}

// BenchmarkOperatorPages measures each page over loopback HTTP with the
// load above, next to a bare net/http handler serving the same bytes on
// the same kind of listener: the difference is the dashboard's own cost
// (request chain, state reads, redaction, templates). It reports the
// median and p95 per request besides the mean.
//
//	go test -run '^$' -bench OperatorPages -benchtime 200x ./internal/operator/
func BenchmarkOperatorPages(b *testing.B) {
	dir := b.TempDir()
	o := newOwners(b, dir)
	seedLoad(b, o)
	for i := range 3 {
		o.session(fmt.Sprintf("/work/project-%d", i))
	}
	ts := start(b, Options{StateDir: dir, Doctor: demoDoctor})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	for _, p := range benchPages {
		body := fetchPage(b, client, ts, p) // warms the decision tally (a one-time full read)
		bare := bareServer(b, body)
		b.Run("page="+p+"/dashboard", func(b *testing.B) {
			measure(b, func() { fetchPage(b, client, ts, p) })
		})
		b.Run("page="+p+"/bare", func(b *testing.B) {
			measure(b, func() { fetchURL(b, client, bare, "", "") })
		})
	}
}

func fetchPage(b *testing.B, c *http.Client, ts *testServer, path string) []byte {
	return fetchURL(b, c, ts.url+path, User, ts.cred.Password().Reveal())
}

func fetchURL(b *testing.B, c *http.Client, url, user, pass string) []byte {
	r, _ := http.NewRequest(http.MethodGet, url, nil)
	if user != "" {
		r.SetBasicAuth(user, pass)
	}
	res, err := c.Do(r)
	if err != nil {
		b.Fatal(err)
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		b.Fatalf("%s: status %d %v", url, res.StatusCode, err)
	}
	return body
}

// bareServer serves body for every request: the floor of an HTTP answer
// of that size on loopback.
func bareServer(b *testing.B, body []byte) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(body)
	})}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/"
}

// measure runs fn b.N times and reports the median and p95 in ms.
func measure(b *testing.B, fn func()) {
	d := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t := time.Now()
		fn()
		d = append(d, time.Since(t))
	}
	b.StopTimer()
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	b.ReportMetric(float64(d[len(d)/2])/1e6, "p50-ms")
	b.ReportMetric(float64(d[len(d)*95/100])/1e6, "p95-ms")
}
