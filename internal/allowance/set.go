package allowance

import "sync"

// SetKeys bounds a [Set]: past it the set starts afresh.
const SetKeys = 4096

// Set is a bounded set of keys (jobs): whose first containment signal was
// recorded in full, whose end was already accounted for. Past [SetKeys]
// it starts afresh, so a key may be taken as new once more, never the
// other way: a first record written again, an end accounted for again,
// never one lost. The zero value is empty and ready; safe for concurrent
// use.
type Set struct {
	mu   sync.Mutex
	keys map[string]bool
}

// Add adds key and reports whether it was not in the set.
func (s *Set) Add(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys[key] {
		return false
	}
	if s.keys == nil || len(s.keys) >= SetKeys {
		s.keys = map[string]bool{}
	}
	s.keys[key] = true
	return true
}

// Has reports whether key is in the set.
func (s *Set) Has(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[key]
}

// Forget removes key.
func (s *Set) Forget(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.keys, key)
}
