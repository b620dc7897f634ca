package price

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// openRouterDouble serves body at /api/v1/models on 127.0.0.1 with status.
func openRouterDouble(t *testing.T, status *atomic.Int32, body *atomic.Value) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/models" || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(int(status.Load()))
		w.Write([]byte(body.Load().(string)))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/api/v1/models"
}

func TestRefreshSaveLoad(t *testing.T) {
	var status atomic.Int32
	var body atomic.Value
	status.Store(200)
	body.Store(testList)
	url := openRouterDouble(t, &status, &body)
	path := CachePath(t.TempDir())
	ctx := context.Background()

	c, err := Refresh(ctx, http.DefaultClient, url)
	if err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	if c.Source().Kind != KindLive || c.Source().URL != url || time.Since(c.Source().Date) > time.Minute {
		t.Errorf("live source = %+v", c.Source())
	}
	if err := c.Save(path); err != nil {
		t.Fatalf("Save: %v", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm()&0o077 != 0 && os.PathSeparator == '/' {
		t.Errorf("cache file mode: %v %v", fi.Mode(), err)
	}
	got, st := Load(path)
	if st.Source.Kind != KindCache || st.Warning != "" || got.Len() != c.Len() {
		t.Errorf("Load after Save: status %+v, len %d want %d", st, got.Len(), c.Len())
	}
	if !got.Source().Date.Equal(c.Source().Date) {
		t.Errorf("cache date = %v, want %v", got.Source().Date, c.Source().Date)
	}

	// Failed refreshes return errors and leave the last good cache in place.
	for _, bad := range []struct {
		status int
		body   string
	}{{500, testList}, {200, "<html>not json</html>"}, {200, `{"data":[]}`}} {
		status.Store(int32(bad.status))
		body.Store(bad.body)
		if _, err := Refresh(ctx, http.DefaultClient, url); err == nil {
			t.Errorf("Refresh with HTTP %d %q succeeded", bad.status, bad.body)
		}
		if again, st := Load(path); st.Source.Kind != KindCache || again.Len() != c.Len() {
			t.Errorf("after a failed refresh Load = %+v", st)
		}
	}
}

func TestRefreshOversize(t *testing.T) {
	var status atomic.Int32
	var body atomic.Value
	status.Store(200)
	body.Store(`{"data":[` + strings.Repeat(" ", MaxListBytes) + `]}`)
	if _, err := Refresh(context.Background(), http.DefaultClient, openRouterDouble(t, &status, &body)); err == nil ||
		!strings.Contains(err.Error(), "larger than") {
		t.Errorf("oversize list: err = %v", err)
	}
}

func TestLoadFallsBackToSnapshot(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.json")
	if c, st := Load(missing); st.Source.Kind != KindEmbedded || st.Warning != "" || c.Len() == 0 {
		t.Errorf("missing cache: %+v", st)
	}
	broken := filepath.Join(dir, "broken.json")
	if err := os.WriteFile(broken, []byte(`{"schemaVersion":1,"fetchedAt":"2026-01-01T00:00:00Z","list":{"data":"x"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, st := Load(broken); st.Source.Kind != KindEmbedded || !strings.Contains(st.Warning, "embedded snapshot") {
		t.Errorf("broken cache: %+v", st)
	}
	if err := os.WriteFile(broken, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, st := Load(broken); st.Source.Kind != KindEmbedded || st.Warning == "" {
		t.Errorf("invalid JSON cache: %+v", st)
	}
}
