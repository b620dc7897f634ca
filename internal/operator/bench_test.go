package operator

import (
	"context"
	"io"
	"net"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/operator/operatortest"
)

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
	// 1,000 jobs (task-sandbox runs with gate grants) and 100,000 egress
	// decisions, the same state bench/operator measures idle RSS on.
	if err := operatortest.Write(context.Background(), dir, operatortest.Issue17); err != nil {
		b.Fatal(err)
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
