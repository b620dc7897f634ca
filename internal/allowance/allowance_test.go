package allowance

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/coagent8/coagent8/internal/fault"
)

// clock is a frozen clock the test moves by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

func newLimiter(t *testing.T, burst int, every time.Duration, maxKeys int) (*Limiter, *clock) {
	t.Helper()
	c := &clock{now: time.Unix(1_800_000_000, 0)}
	l, err := New(Config{Burst: burst, Every: every, MaxKeys: maxKeys, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return l, c
}

func TestNewRefusesNonPositive(t *testing.T) {
	for _, c := range []Config{{Every: time.Second, MaxKeys: 1}, {Burst: 1, MaxKeys: 1}, {Burst: 1, Every: time.Second}} {
		_, err := New(c)
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Reason != "allowance.config" {
			t.Errorf("New(%+v) = %v, want allowance.config", c, err)
		}
	}
}

// TestAdmit: a burst, then one per interval; the first record admitted
// after a refill carries what was left out; keys do not share.
func TestAdmit(t *testing.T) {
	l, c := newLimiter(t, 3, time.Second, 10)
	type step struct {
		key     string
		advance time.Duration
		ok      bool
		carried int
	}
	steps := []step{
		{"a", 0, true, 0}, {"a", 0, true, 0}, {"a", 0, true, 0},
		{"a", 0, false, 0}, {"a", 0, false, 0},
		{"b", 0, true, 0}, // its own allowance
		{"a", 999 * time.Millisecond, false, 0},
		{"a", time.Millisecond, true, 3},
		{"a", 0, false, 0},
	}
	for i, s := range steps {
		c.advance(s.advance)
		ok, carried, dropped := l.Admit(s.key)
		if ok != s.ok || carried != s.carried || dropped != nil {
			t.Errorf("step %d (%s): got (%v, %d, %v), want (%v, %d, nil)", i, s.key, ok, carried, dropped, s.ok, s.carried)
		}
	}
	if got, want := l.TakeAll(), map[string]int{"a": 1}; !cmp.Equal(got, want) {
		t.Errorf("TakeAll = %v, want %v", got, want)
	}
	if got := l.TakeAll(); got != nil {
		t.Errorf("TakeAll again = %v, want nil (taken)", got)
	}
}

func TestTake(t *testing.T) {
	l, _ := newLimiter(t, 1, time.Hour, 10)
	for _, k := range []string{"a", "a", "a", "b", "b"} {
		l.Admit(k)
	}
	if got := l.Take("a"); got != 2 {
		t.Errorf("Take(a) = %d, want 2", got)
	}
	if got := l.Take("a"); got != 0 {
		t.Errorf("Take(a) again = %d, want 0", got)
	}
	if got := l.Take("b"); got != 1 {
		t.Errorf("Take(b) = %d, want 1", got)
	}
	for _, k := range []string{"j1/x", "j1/x", "j1/y", "j1/y", "j2/x", "j2/x"} {
		l.Admit(k)
	}
	got := l.TakeIf(func(k string) bool { return strings.HasPrefix(k, "j1/") })
	if want := map[string]int{"j1/x": 1, "j1/y": 1}; !cmp.Equal(got, want) {
		t.Errorf("TakeIf(j1/) = %v, want %v", got, want)
	}
	if got := l.TakeAll(); !cmp.Equal(got, map[string]int{"j2/x": 1}) {
		t.Errorf("TakeAll after TakeIf = %v, want only j2/x", got)
	}
}

// TestKeysBounded: past MaxKeys the allowances start afresh and the
// counts they held come back from Admit, so none vanishes.
func TestKeysBounded(t *testing.T) {
	l, _ := newLimiter(t, 1, time.Hour, 4)
	for range 6 {
		l.Admit("flood")
	}
	var dropped map[string]int
	for i := range 4 {
		if _, _, d := l.Admit(fmt.Sprint("k", i)); d != nil {
			dropped = d
		}
	}
	if want := map[string]int{"flood": 5}; !cmp.Equal(dropped, want) {
		t.Errorf("dropped %v, want %v", dropped, want)
	}
	if n := l.Len(); n > 4 {
		t.Errorf("%d allowances kept, want at most 4", n)
	}
}

// TestConcurrent: under concurrent use every record is admitted or
// counted, and no more than the burst are admitted on a frozen clock.
func TestConcurrent(t *testing.T) {
	l, _ := newLimiter(t, 50, time.Hour, 10)
	var mu sync.Mutex
	admitted, carried := 0, 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				ok, n, _ := l.Admit("k")
				mu.Lock()
				if ok {
					admitted++
				}
				carried += n
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	left := l.Take("k")
	if admitted != 50 || admitted+carried+left != 800 {
		t.Errorf("admitted %d, carried %d, left %d; want 50 admitted and 800 in all", admitted, carried, left)
	}
}

func TestCarry(t *testing.T) {
	shared := map[string]string{"job": "j"}
	tests := []struct {
		ids  map[string]string
		n    int
		want map[string]string
	}{
		{shared, 0, map[string]string{"job": "j"}},
		{shared, 7, map[string]string{"job": "j", "suppressed": "7"}},
		{nil, 2, map[string]string{"suppressed": "2"}},
		{nil, 0, nil},
	}
	for _, tt := range tests {
		if got := Carry(tt.ids, tt.n); !cmp.Equal(got, tt.want) {
			t.Errorf("Carry(%v, %d) = %v, want %v", tt.ids, tt.n, got, tt.want)
		}
	}
	if _, ok := shared[IDSuppressed]; ok {
		t.Error("Carry wrote the caller's map")
	}
}
