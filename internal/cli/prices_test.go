package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coagent8/coagent8/internal/config"
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
}
