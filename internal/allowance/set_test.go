package allowance

import (
	"strconv"
	"testing"
)

// TestSet: Add reports a key new once; Forget makes it new again; past
// SetKeys the set starts afresh, so an old key is new again (never the
// other way).
func TestSet(t *testing.T) {
	var s Set
	for _, tt := range []struct {
		key  string
		want bool
	}{{"a", true}, {"a", false}, {"b", true}} {
		if got := s.Add(tt.key); got != tt.want {
			t.Errorf("Add(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
	if !s.Has("a") || s.Has("c") {
		t.Errorf("Has: a %v, c %v; want true, false", s.Has("a"), s.Has("c"))
	}
	s.Forget("a")
	if got := s.Add("a"); !got {
		t.Errorf("Add after Forget = %v, want true", got)
	}
	for i := range SetKeys {
		s.Add(strconv.Itoa(i))
	}
	if got := s.Add("a"); !got {
		t.Errorf("Add of an old key past the bound = %v, want true (started afresh)", got)
	}
}
