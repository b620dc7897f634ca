package lineage

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Limits bound what a workspace index reads. A labelled file above
// MaxFileBytes, or more than MaxFiles labelled files, makes lineage
// unknown rather than silently unindexed.
const (
	MaxFileBytes = 8 << 20
	MaxFiles     = 20000
)

// Workspace indexes the files under Root matched by path labels, and
// rebuilds the index when a labelled file or a directory changes. Its
// methods are safe for concurrent use.
type Workspace struct {
	root  string
	globs [][]string // per source id: its globs

	mu    sync.Mutex
	idx   *Index
	seen  map[string]stamp // labelled files and every directory walked
	err   error
	built bool
}

type stamp struct {
	size int64
	mod  time.Time
}

// NewWorkspace returns a workspace index of root (absolute). globs[i]
// lists the globs of source id i. Nothing is read until [Workspace.Current].
func NewWorkspace(root string, globs [][]string) (*Workspace, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("lineage: workspace root must be absolute")
	}
	for _, gs := range globs {
		for _, g := range gs {
			if !ValidGlob(g) {
				return nil, fmt.Errorf("lineage: invalid glob %q", g)
			}
		}
	}
	return &Workspace{root: filepath.Clean(root), globs: globs}, nil
}

// Current returns an index that is fresh for the files and directories
// as they are now, rebuilding it after any change, or an error wrapping
// [ErrUnknown]. The freshness check stats every labelled file and every
// directory of the workspace (.git excluded).
func (w *Workspace) Current() (*Index, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.built && w.err == nil && w.fresh() {
		return w.idx, nil
	}
	w.idx, w.seen, w.err = w.build()
	w.built = true
	if w.err != nil {
		return nil, errors.Join(ErrUnknown, w.err)
	}
	return w.idx, nil
}

func (w *Workspace) fresh() bool {
	for p, s := range w.seen {
		st, err := os.Lstat(p)
		if err != nil || st.Size() != s.size || !st.ModTime().Equal(s.mod) {
			return false
		}
	}
	return true
}

func (w *Workspace) build() (*Index, map[string]stamp, error) {
	idx, seen := NewIndex(), map[string]stamp{}
	err := filepath.WalkDir(w.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err // an unreadable directory may hide a labelled file
		}
		if d.IsDir() && d.Name() == ".git" && p != w.root {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return w.stampOf(p, seen)
		}
		return w.file(idx, seen, p, d)
	})
	return idx, seen, err
}

func (w *Workspace) stampOf(p string, seen map[string]stamp) error {
	st, err := os.Lstat(p)
	if err != nil {
		return err
	}
	seen[p] = stamp{st.Size(), st.ModTime()}
	return nil
}

// file fingerprints p under every label whose glob matches it.
func (w *Workspace) file(idx *Index, seen map[string]stamp, p string, d fs.DirEntry) error {
	rel, err := filepath.Rel(w.root, p)
	if err != nil {
		return err
	}
	ids := w.labels(filepath.ToSlash(rel))
	if len(ids) == 0 {
		return nil
	}
	if !d.Type().IsRegular() {
		return fmt.Errorf("labelled path %s is not a regular file", rel)
	}
	if len(seen) > MaxFiles {
		return errors.New("too many labelled files")
	}
	if err := w.stampOf(p, seen); err != nil {
		return err
	}
	if seen[p].size > MaxFileBytes {
		return fmt.Errorf("labelled file %s is larger than %d bytes", rel, MaxFileBytes)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	for _, id := range ids {
		idx.Add(id, b)
	}
	return nil
}

func (w *Workspace) labels(rel string) []int32 {
	var ids []int32
	for i, gs := range w.globs {
		for _, g := range gs {
			if Match(g, rel) {
				ids = append(ids, int32(i))
				break
			}
		}
	}
	return ids
}
