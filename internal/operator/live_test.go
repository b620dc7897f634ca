package operator

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/event"
)

// TestOperatorLiveStreamsChanges: /live sends "change" when another
// process appends a security event or commits to the state database.
func TestOperatorLiveStreamsChanges(t *testing.T) {
	dir := t.TempDir()
	o := newOwners(t, dir)
	ts := start(t, Options{StateDir: dir})
	hr, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, ts.url+"/live", nil)
	hr.SetBasicAuth(User, ts.cred.Password().Reveal())
	res, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	await(t, lines, "event: hello")
	o.event(event.Event{Type: event.TypeRefusal, Reason: "test.live", Rule: "test"})
	await(t, lines, "event: change")
	o.grant("job-live", "claude-sonnet-5")
	await(t, lines, "event: change")
}

func await(t *testing.T, lines <-chan string, want string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("stream ended before %q", want)
			}
			if strings.HasPrefix(l, want) {
				return
			}
		case <-deadline:
			t.Fatalf("no %q within 5 s", want)
		}
	}
}
