// Package fingerprint records a workspace's observable state before a
// read-only turn and compares it afterwards, so a backend that wrote
// despite its profile is caught by coagent8 itself rather than trusted
// "attribution is not an effect receipt").
//
// The fingerprint is a walk of the tree recording each entry's relative
// path, type, size, mode and modification time (symlinks are not
// followed). It is bounded: a tree larger than [MaxEntries] or slower than
// [MaxDuration] yields an unmeasured fingerprint, which the caller reports
// as a warning rather than a verified claim.
package fingerprint

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io/fs"
	"path/filepath"
	"sort"
	"time"
)

// Bounds of one walk.
const (
	MaxEntries  = 200_000
	MaxDuration = 3 * time.Second
)

// Snapshot is a workspace fingerprint.
type Snapshot struct {
	entries  map[string]entry
	measured bool
}

type entry struct {
	mode  fs.FileMode
	size  int64
	mtime int64
}

var errBound = errors.New("fingerprint bound reached")

// Take fingerprints root.
func Take(root string) Snapshot {
	s := Snapshot{entries: map[string]entry{}, measured: true}
	deadline := time.Now().Add(MaxDuration)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable entries are recorded by absence on both sides
		}
		if len(s.entries) >= MaxEntries || time.Now().After(deadline) {
			return errBound
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		e := entry{mode: info.Mode()}
		if !info.IsDir() {
			e.size, e.mtime = info.Size(), info.ModTime().UnixNano()
		}
		s.entries[rel] = e
		return nil
	})
	if err != nil {
		s.measured = false
	}
	return s
}

// Measured reports whether the whole tree was fingerprinted.
func (s Snapshot) Measured() bool { return s.measured }

// Changes lists up to max paths that differ between s (before) and after.
func (s Snapshot) Changes(after Snapshot, max int) []string {
	var out []string
	for p, e := range s.entries {
		if a, ok := after.entries[p]; !ok || a != e {
			out = append(out, p)
		}
	}
	for p := range after.entries {
		if _, ok := s.entries[p]; !ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	if len(out) > max {
		out = out[:max]
	}
	return out
}

// Digest returns a SHA-256 over the sorted entries (for receipts).
func (s Snapshot) Digest() [32]byte {
	keys := make([]string, 0, len(s.entries))
	for k := range s.entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	var buf [24]byte
	for _, k := range keys {
		e := s.entries[k]
		h.Write([]byte(k))
		binary.LittleEndian.PutUint64(buf[0:], uint64(e.mode))
		binary.LittleEndian.PutUint64(buf[8:], uint64(e.size))
		binary.LittleEndian.PutUint64(buf[16:], uint64(e.mtime))
		h.Write(buf[:])
	}
	var d [32]byte
	copy(d[:], h.Sum(nil))
	return d
}
