package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/config"
	"github.com/coagent8/coagent8/internal/price"
	"github.com/coagent8/coagent8/internal/redact"
)

func runPrices(t *testing.T, env config.Env, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := MainEnv(context.Background(), args, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb}, env)
	return out.String(), errb.String(), code
}

func TestPricesRefreshAndShow(t *testing.T) {
	body := `{"data":[{"id":"openai/gpt-test","pricing":{"completion":"0.0000125"}}]}`
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		w.Write([]byte(body))
	}))
	defer srv.Close()
	dir := t.TempDir()
	env := config.FromList([]string{"HOME=" + dir, "COAGENT8_DIR=" + dir})

	out, _, code := runPrices(t, env, "prices", "show")
	if code != 0 || !strings.Contains(out, "Price source: embedded") || !strings.Contains(out, "askAbovePrice 20.00") ||
		!strings.Contains(out, "priceMultiplier 2.00") || !strings.Contains(out, "NOT live") {
		t.Errorf("show before refresh (code %d):\n%s", code, out)
	}
	out, errOut, code := runPrices(t, env, "prices", "refresh", "--url", srv.URL+"/api/v1/models")
	if code != 0 || !strings.Contains(out, "Cached 1 priced models") {
		t.Fatalf("refresh: code %d\n%s%s", code, out, errOut)
	}
	out, _, _ = runPrices(t, env, "prices", "show")
	if !strings.Contains(out, "Price source: cache") || !strings.Contains(out, "openai/gpt-test") || !strings.Contains(out, "12.50") {
		t.Errorf("show after refresh:\n%s", out)
	}
	// A broken list is refused and the last good cache stays.
	body = "not json"
	_, errOut, code = runPrices(t, env, "prices", "refresh", "--url", srv.URL+"/api/v1/models")
	if code != ExitFailure || !strings.Contains(errOut, "prices.refresh_failed") {
		t.Errorf("broken refresh: code %d, %s", code, errOut)
	}
	if out, _, _ = runPrices(t, env, "prices", "show"); !strings.Contains(out, "openai/gpt-test") {
		t.Errorf("last good cache lost:\n%s", out)
	}
	if _, _, code = runPrices(t, env, "prices", "refresh", "--url", "file:///etc/passwd"); code != ExitUsage {
		t.Errorf("file URL: code %d, want usage", code)
	}
	// reset goes back to the embedded snapshot, once and then as a no-op.
	for _, want := range []string{"Removed ", "No refreshed price cache"} {
		if out, errOut, code = runPrices(t, env, "prices", "reset"); code != 0 || !strings.Contains(out, want) {
			t.Errorf("reset: code %d, got %q%s, want %q", code, out, errOut, want)
		}
		if out, _, _ = runPrices(t, env, "prices", "show"); !strings.Contains(out, "Price source: embedded") || strings.Contains(out, "openai/gpt-test") {
			t.Errorf("show after reset:\n%s", out)
		}
	}
}

// TestPricesShowCountMatchesList: the count in the header is the number
// of rows listed (canonical slugs that name the same model are not
// counted twice), for the embedded snapshot and a refreshed cache with a
// slug.
func TestPricesShowCountMatchesList(t *testing.T) {
	body := `{"data":[{"id":"openai/gpt-a","canonical_slug":"openai/gpt-a-2026","pricing":{"completion":"0.00001"}},` +
		`{"id":"openai/gpt-b","pricing":{"completion":"0.00002"}}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(body)) }))
	defer srv.Close()
	env := testEnv(t)
	for _, refresh := range []bool{false, true} {
		if refresh {
			if _, errs, code := runPrices(t, env, "prices", "refresh", "--url", srv.URL); code != ExitOK {
				t.Fatalf("refresh: %d %s", code, errs)
			}
		}
		out, _, code := runPrices(t, env, "prices", "show")
		rows := strings.Count(out, " USD/M output\n")
		if code != ExitOK || rows == 0 || !strings.Contains(out, fmt.Sprintf(", %d priced ids.", rows)) {
			t.Errorf("refresh=%v: exit %d, %d rows listed, header disagrees:\n%s", refresh, code, rows, out)
		}
	}
}

// TestPricesShowRunIDs (newcomer report): each row names, before the
// price list's own id, the id a backend CLI runs, which is the one a
// governance allow rule takes: copying the list's
// anthropic/claude-sonnet-5.5 gave a rule that never applied.
func TestPricesShowRunIDs(t *testing.T) {
	out, _, code := runPrices(t, testEnv(t), "prices", "show")
	rows := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) == 5 && strings.HasSuffix(line, " USD/M output") {
			rows[f[1]] = f[0]
		}
	}
	got := map[string]string{}
	for _, id := range []string{"anthropic/claude-sonnet-5.5", "openai/gpt-6.1-sol", "google/gemini-2.5-pro"} {
		got[id] = rows[id]
	}
	want := map[string]string{"anthropic/claude-sonnet-5.5": "claude-sonnet-5-5", "openai/gpt-6.1-sol": "gpt-6.1-sol",
		"google/gemini-2.5-pro": "gemini-2.5-pro"}
	if d := cmp.Diff(want, got); code != ExitOK || d != "" {
		t.Errorf("exit %d, run id by price list id (-want +got):\n%s\n%s", code, d, out)
	}
	if !strings.Contains(out, "coagent8 governance") {
		t.Errorf("show does not say which id governance takes:\n%s", out)
	}
}

// TestPricesRefreshSaysWhy: a failed refresh names its cause (HTTP
// status, invalid JSON, a list without prices, connection refused) and
// keeps the previous catalog.
func TestPricesRefreshSaysWhy(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	tests := []struct {
		name   string
		status int
		body   string
		url    string // overrides the test server
		want   string
	}{
		{"HTTP status", http.StatusServiceUnavailable, "busy", "", "the server answered HTTP 503 Service Unavailable"},
		{"not JSON", http.StatusOK, "<html>", "", "the answer is not a valid JSON model list"},
		{"wrong JSON", http.StatusOK, `{"data":{"id":1}}`, "", "the answer is not a valid JSON model list"},
		{"no data", http.StatusOK, `{"error":"x"}`, "", `the answer has no "data" array`},
		{"no prices", http.StatusOK, `{"data":[]}`, "", "the list has no priced models"},
		{"refused", 0, "", closedURL, "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			u := srv.URL
			if tt.url != "" {
				u = tt.url
			}
			_, errs, code := runPrices(t, testEnv(t), "prices", "refresh", "--url", u)
			want := "could not refresh the price list: " + tt.want
			if code != ExitFailure || !strings.Contains(errs, want) || !strings.Contains(errs, "the previous catalog stays in use") {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errs, ExitFailure, want)
			}
		})
	}
}

// TestRefreshCause covers causes a test cannot provoke without leaving
// the machine (DNS) or waiting (timeouts), and the redacted fallback.
func TestRefreshCause(t *testing.T) {
	secret := "sk-ant-" + strings.Repeat("Z", 40)
	tests := []struct {
		err  error
		want string
	}{
		{&url.Error{Op: "Get", URL: "https://x.invalid", Err: &net.DNSError{Name: "x.invalid", IsNotFound: true}},
			"DNS lookup of x.invalid failed (no such host)"},
		{&url.Error{Op: "Get", URL: "https://x", Err: context.DeadlineExceeded}, "timed out"},
		{fmt.Errorf("fetch price list: %w", price.ErrTooLarge), "the list is larger than 16 MiB"},
	}
	red := redact.NewDiagnostic("/home/u")
	for _, tt := range tests {
		if got := refreshCause(tt.err, red); got != tt.want {
			t.Errorf("refreshCause(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
	if got := refreshCause(errors.New("odd failure with "+secret), red); strings.Contains(got, secret) {
		t.Errorf("fallback not redacted: %q", got)
	}
}

// TestUnpricedListed (issue 18 item 3): the embedded snapshot's note says
// some current models have no price and names the command that lists
// them; `prices show` and `governance show` list them.
func TestUnpricedListed(t *testing.T) {
	env := testEnv(t)
	for _, args := range [][]string{{"prices", "show"}, {"governance", "show"}} {
		out, errOut, code := runPrices(t, env, args...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, errOut)
		}
		for _, want := range []string{"no price (`coagent8 prices show` lists them under Unpriced)",
			"\nUnpriced: Current CLI models with no price found", "claude-opus-4-8", "gpt-5.6-luna"} {
			if !strings.Contains(out, want) {
				t.Errorf("%v lacks %q:\n%s", args, want, out)
			}
		}
		if strings.Contains(out, "see unpriced") {
			t.Errorf("%v still points at nothing:\n%s", args, out)
		}
	}
}
