package admission

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gitrepo"
	"github.com/coagent8/coagent8/internal/quarantine"
)

// entry is a path's index entry in the scratch index: git mode and blob id.
type entry struct{ mode, id string }

// plan is an admission computed without writing to the checkout.
type plan struct {
	repo     *gitrepo.Repo
	s        *gitrepo.Scratch
	patch    []byte
	paths    []string
	pre      map[string]fileState
	ops      []op
	threeWay bool
	// fast holds the patch's sections when the checkout has every
	// preimage (see fast.go); nil takes the general path.
	fast []section
	lock *os.File // the pending lock, held from staging to the end
	req  Request  // rechecked against the job before the commit point
}

// makePlan applies the patch to a scratch index holding the checkout's
// current version of the touched paths and derives the operations.
func makePlan(ctx context.Context, repo *gitrepo.Repo, s *gitrepo.Scratch, patch []byte) (*plan, error) {
	p := &plan{repo: repo, s: s, patch: patch}
	if err := p.touched(ctx); err != nil {
		return nil, err
	}
	if secs, ok := parseSections(patch); ok {
		pre, err := statAll(repo.Top, p.paths)
		if err != nil {
			return nil, err
		}
		if fastEligible(repo.Top, repo.GitDir, secs) {
			p.pre, p.fast = pre, secs
			return p, p.emptiedDirs()
		}
	}
	for _, f := range []func(context.Context) error{p.snapshot, func(context.Context) error { return p.emptiedDirs() }, p.apply} {
		if err := f(ctx); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func applyError(err error) error {
	return fault.Wrap(fault.ProcessError, ReasonApply, "The candidate patch could not be applied.", err)
}

// touched lists every path the patch names (old and new), refusing any
// the scan would refuse and any below a symbolic link of the checkout.
func (p *plan) touched(ctx context.Context) error {
	if gitlink(p.patch) {
		return fault.New(fault.PolicyDenied, ReasonPath, "The patch changes a submodule, which admission does not write.")
	}
	names, ok := patchPaths(p.patch)
	if !ok {
		out, err := p.s.Git(ctx, "", p.patch, "apply", "--numstat", "-z", "-")
		if err != nil {
			return applyError(err)
		}
		// numstat names a rename or copy by its new path only.
		names = append(numstatPaths(out), renameSources(p.patch)...)
	}
	deleted := deletedPaths(p.patch)
	seen := map[string]bool{}
	for _, f := range names {
		if seen[f] {
			continue
		}
		seen[f] = true
		if r := quarantine.CheckPath(f); r != "" {
			return fault.New(fault.PolicyDenied, ReasonPath, fmt.Sprintf("The patch names a path it may not write (%s): %q.", r, f)).With("path", f)
		}
		if err := noSymlinkParent(p.repo.Top, f, deleted); err != nil {
			return err
		}
		p.paths = append(p.paths, f)
	}
	sort.Strings(p.paths)
	return nil
}

// gitlink reports whether a patch header names mode 160000 (a submodule).
func gitlink(patch []byte) bool {
	for _, line := range bytes.Split(patch, []byte("\n")) {
		for _, pre := range []string{"new file mode ", "deleted file mode ", "old mode ", "new mode ", "index "} {
			if bytes.HasPrefix(line, []byte(pre)) && bytes.HasSuffix(line, []byte("160000")) {
				return true
			}
		}
	}
	return false
}

// numstatPaths parses `git apply --numstat -z`: "A\tD\tpath\0", or for a
// rename "A\tD\t\0old\0new\0".
func numstatPaths(out []byte) []string {
	var paths []string
	f := strings.Split(string(out), "\x00")
	for i := 0; i < len(f); i++ {
		parts := strings.SplitN(f[i], "\t", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[2] != "" {
			paths = append(paths, parts[2])
		} else if i+2 < len(f) {
			paths = append(paths, f[i+1], f[i+2])
			i += 2
		}
	}
	return paths
}

// noSymlinkParent refuses a path whose existing parent components in the
// checkout are not all real directories (git apply refuses "beyond a
// symbolic link" for the same reason: the write would land elsewhere).
// A parent that is a regular file the patch deletes is the one exception
// (a file replaced by a directory, issue 19 item 5): it is removed before
// anything is written below it, so nothing exists beyond it.
func noSymlinkParent(top, rel string, deleted map[string]bool) error {
	dir := top
	parts := strings.Split(rel, "/")
	for i, el := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, el)
		st, err := os.Lstat(dir)
		if os.IsNotExist(err) {
			return nil
		}
		if err == nil && st.Mode().IsRegular() && deleted[strings.Join(parts[:i+1], "/")] {
			return nil
		}
		if err != nil || !st.IsDir() {
			return fault.New(fault.PolicyDenied, ReasonPath, fmt.Sprintf("The patch writes beyond a symbolic link or file of the checkout: %q.", rel)).With("path", rel)
		}
	}
	return nil
}

// deletedPaths returns the paths the patch deletes (nil when its
// sections do not parse: then no parent-file exception is made).
func deletedPaths(patch []byte) map[string]bool {
	secs, ok := parseSections(patch)
	if !ok {
		return nil
	}
	m := map[string]bool{}
	for _, s := range secs {
		if s.deleted {
			m[s.oldPath] = true
		}
	}
	return m
}

// emptiedDirs checks every touched path that is a directory in the
// checkout (a directory the candidate replaces with a file): everything
// in it must be a file the patch deletes, so it is empty, and removed,
// before the file takes its name. Anything else there (an untracked or
// ignored file) would make that rename fail after the commit point, so
// the admission is refused before anything is written.
func (p *plan) emptiedDirs() error {
	touched := map[string]bool{}
	for _, path := range p.paths {
		touched[path] = true
	}
	for _, path := range p.paths {
		if !p.pre[path].mode.IsDir() {
			continue
		}
		var stray string
		root := filepath.Join(p.repo.Top, filepath.FromSlash(path))
		err := filepath.WalkDir(root, func(q string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(p.repo.Top, q)
			if rel = filepath.ToSlash(rel); !d.IsDir() && !touched[rel] {
				stray = rel
				return fs.SkipAll
			}
			return nil
		})
		if err != nil {
			return applyError(err)
		}
		if stray != "" {
			return fault.New(fault.InvalidInput, ReasonDirNotEmpty, fmt.Sprintf(
				"The candidate replaces the directory %q with a file, but the checkout has %q there, which the candidate does not delete "+
					"(an untracked or ignored file); move it out of the way and admit again. Nothing was written.", path, stray)).
				With("path", path).With("stray", stray)
		}
	}
	return nil
}

// snapshot stats the touched paths and loads their current versions into
// the scratch index (update-index reads the work tree; it never writes
// it).
func (p *plan) snapshot(ctx context.Context) error {
	var err error
	if p.pre, err = statAll(p.repo.Top, p.paths); err != nil {
		return err
	}
	// The scratch index does not exist yet: update-index creates it with
	// exactly these paths.
	// A directory (one the candidate replaces with a file) has no index
	// entry of its own: update-index refuses it, and the files in it are
	// touched paths already.
	var files []string
	for _, path := range p.paths {
		if !p.pre[path].mode.IsDir() {
			files = append(files, path)
		}
	}
	in := []byte(strings.Join(files, "\x00") + "\x00")
	if _, err := p.s.Git(ctx, p.repo.Top, in, "update-index", "--add", "--remove", "-z", "--stdin"); err != nil {
		return conflict(p.paths, err)
	}
	return nil
}

// apply runs git apply on the scratch index, with a three-way fallback.
func (p *plan) apply(ctx context.Context) error {
	if _, err := p.s.Git(ctx, "", p.patch, "apply", "--cached", "--whitespace=nowarn", "-"); err == nil {
		return nil
	}
	p.threeWay = true
	_, err := p.s.Git(ctx, "", p.patch, "apply", "--cached", "--3way", "--whitespace=nowarn", "-")
	if err == nil {
		return nil
	}
	out, lerr := p.s.Git(ctx, "", nil, "ls-files", "-u", "-z")
	var paths []string
	for _, e := range lsEntries(out, lerr) {
		paths = append(paths, e.path)
	}
	if len(paths) == 0 {
		paths = p.paths
	}
	return conflict(paths, err)
}

// conflict is the report of a patch that does not apply to the checkout.
func conflict(paths []string, cause error) error {
	uniq := map[string]bool{}
	var list []string
	for _, p := range paths {
		if !uniq[p] {
			uniq[p] = true
			list = append(list, strconv.Quote(p))
		}
	}
	return fault.Wrap(fault.InvalidInput, ReasonConflict,
		"The candidate conflicts with the checkout's current state; nothing was written.", cause).
		With("paths", strings.Join(list, ","))
}

type lsEntry struct {
	path string
	entry
}

// lsEntries parses `git ls-files -s -z` / `-u -z`: "mode id stage\tpath\0".
func lsEntries(out []byte, err error) []lsEntry {
	if err != nil {
		return nil
	}
	var es []lsEntry
	for _, rec := range bytes.Split(out, []byte{0}) {
		meta, path, ok := bytes.Cut(rec, []byte("\t"))
		f := strings.Fields(string(meta))
		if ok && len(f) == 3 {
			es = append(es, lsEntry{path: string(path), entry: entry{mode: f[0], id: f[1]}})
		}
	}
	return es
}

// fileState is what a touched path was when planned.
type fileState struct {
	exists bool
	mode   fs.FileMode
	size   int64
	mtime  int64
}

func statAll(top string, paths []string) (map[string]fileState, error) {
	m := map[string]fileState{}
	for _, p := range paths {
		st, err := os.Lstat(filepath.Join(top, filepath.FromSlash(p)))
		switch {
		case os.IsNotExist(err) || errors.Is(err, syscall.ENOTDIR): // below a file the patch deletes
			m[p] = fileState{}
		case err != nil:
			return nil, applyError(err)
		default:
			m[p] = fileState{exists: true, mode: st.Mode(), size: st.Size(), mtime: st.ModTime().UnixNano()}
		}
	}
	return m, nil
}
