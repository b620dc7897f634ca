package quarantine

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/coagent8/coagent8/internal/candidate"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gitrepo"
)

// A delegate job whose base is a commit other than the checkout's HEAD
// (issue 16 scope 1). The candidate is an overlay whose lower layer is the
// checkout itself (nothing copied: issue 15's 50 ms target), so the
// commit's content is put in the upper layer before the agent starts:
// what differs between HEAD and the commit, a deletion as a whiteout, plus
// the candidate's .git/HEAD (detached at the commit) and an index of the
// commit, so that git inside sees a clean checkout of it. The cost is the
// difference's, never the repository's. After the run, [Seed.Changes]
// turns the changed-file set (against the checkout) into the agent's own
// changes against the commit, which [Build] then stages on the commit.

// Reasons of a refused seed (INVALID_INPUT unless said otherwise).
const (
	// ReasonSeedSubmodule: the commit and HEAD differ in a submodule.
	ReasonSeedSubmodule = "delegate.base_submodule"
	// ReasonSeedTooLarge (INPUT_LIMIT): the difference exceeds
	// [MaxSeedBytes] or [MaxSeedPaths].
	ReasonSeedTooLarge = "delegate.base_too_far"
	// ReasonSeedPath: the difference names a path no checkout can hold.
	ReasonSeedPath = "delegate.base_path"
	// ReasonSeed (PROCESS_ERROR): git or the file system failed.
	ReasonSeed = "delegate.base_seed"
)

// Bounds of a seed: the difference between HEAD and the base commit.
const (
	MaxSeedBytes = 256 << 20
	MaxSeedPaths = 100_000
)

// Seed is the starting content of a candidate's upper layer for a base
// commit other than HEAD (see [SeedBase]). It records what it wrote, so
// [Seed.Changes] can tell the agent's changes from its own.
type Seed struct {
	// Base is the commit the candidate starts from.
	Base string
	// paths are the workspace paths that differ between HEAD and Base:
	// what Base has there (deleted: Base has nothing).
	paths map[string]seedPath
	// dirs are the directories the seed created where the checkout has
	// none (or has a file).
	dirs    map[string]bool
	newHash func() hash.Hash
}

type seedPath struct {
	deleted bool
	mode    string // "100644", "100755" or "120000"
	id      string // blob id
}

// SeedBase writes base's difference from head (the checkout's HEAD,
// clean) into upper, which must not exist yet and is created 0755, and
// returns what it wrote. The workspace's .git must be a directory (a
// linked worktree's or submodule's git directory is projected from
// elsewhere and has no place in this layer): upper/.git then holds HEAD
// (detached at base) and an index of base (the checkout's index merged
// two-way, so unchanged files keep their stat data). The user's
// repository is only read. Errors: INVALID_INPUT [ReasonSeedSubmodule],
// [ReasonSeedPath]; INPUT_LIMIT [ReasonSeedTooLarge]; PROCESS_ERROR
// [ReasonSeed].
func SeedBase(ctx context.Context, repo *gitrepo.Repo, head, base, upper string) (*Seed, error) {
	s, err := repo.Scratch(filepath.Dir(upper))
	if err != nil {
		return nil, seedErr(err)
	}
	defer s.Close()
	diffs, err := treeDiff(ctx, s, head, base)
	if err != nil {
		return nil, err
	}
	sd := &Seed{Base: base, paths: map[string]seedPath{}, dirs: map[string]bool{}, newHash: sha1.New}
	if len(base) == 64 {
		sd.newHash = sha256.New
	}
	blobs, err := readBlobs(ctx, s, diffs)
	if err != nil {
		return nil, err
	}
	// Chmod past the umask and a setgid bit inherited from the parent
	// (the sandbox refuses special bits in a seed), as for every
	// directory the seed makes.
	if err := os.Mkdir(upper, 0o755); err != nil {
		return nil, seedErr(err)
	}
	if err := os.Chmod(upper, 0o755); err != nil {
		return nil, seedErr(err)
	}
	root, err := os.OpenRoot(upper)
	if err != nil {
		return nil, seedErr(err)
	}
	defer root.Close()
	w := seedWriter{root: root, lower: repo.Top, seed: sd}
	for _, d := range diffs {
		if err := w.write(d, blobs[d.id]); err != nil {
			return nil, seedErr(err)
		}
	}
	if err := w.gitState(ctx, s, head); err != nil {
		return nil, seedErr(err)
	}
	return sd, nil
}

// diffEntry is one line of `git diff-tree -r -z --no-renames` between
// HEAD and the base: the path, what the base has (mode "000000" when it
// has nothing) and its blob.
type diffEntry struct {
	path, mode, id string
}

func treeDiff(ctx context.Context, s *gitrepo.Scratch, head, base string) ([]diffEntry, error) {
	out, err := s.Git(ctx, "", nil, "diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--end-of-options", head, base)
	if err != nil {
		return nil, seedErr(err)
	}
	var diffs []diffEntry
	fields := bytes.Split(bytes.TrimSuffix(out, []byte{0}), []byte{0})
	for i := 0; i+1 < len(fields); i += 2 {
		// ":<old mode> <new mode> <old id> <new id> <status>"
		meta := strings.Fields(strings.TrimPrefix(string(fields[i]), ":"))
		p := string(fields[i+1])
		if len(meta) != 5 {
			return nil, seedErr(fmt.Errorf("unexpected diff-tree record %q", fields[i]))
		}
		if meta[0] == "160000" || meta[1] == "160000" {
			return nil, fault.New(fault.InvalidInput, ReasonSeedSubmodule, "The base commit and HEAD differ in the submodule "+strconv.Quote(p)+
				": delegate from HEAD, or check that commit out (e.g. with git worktree add) and delegate there.").With("path", p)
		}
		if scanPath(p) != "" {
			return nil, fault.New(fault.InvalidInput, ReasonSeedPath, "The base commit has a path no checkout can hold: "+strconv.Quote(p)).With("path", p)
		}
		diffs = append(diffs, diffEntry{path: p, mode: meta[1], id: meta[3]})
	}
	if len(diffs) > MaxSeedPaths {
		return nil, fault.New(fault.InputLimit, ReasonSeedTooLarge, fmt.Sprintf("The base commit differs from HEAD in %d paths (at most %d): check it out and delegate there.", len(diffs), MaxSeedPaths))
	}
	return diffs, nil
}

// CheckSeed refuses, before anything starts, a base commit that
// [SeedBase] would refuse for its difference from head: the same errors
// but PROCESS_ERROR, with two git processes and nothing written.
func CheckSeed(ctx context.Context, repo *gitrepo.Repo, head, base string) error {
	s, err := repo.Scratch("")
	if err != nil {
		return seedErr(err)
	}
	defer s.Close()
	diffs, err := treeDiff(ctx, s, head, base)
	if err != nil {
		return err
	}
	_, err = checkSizes(ctx, s, diffs)
	return err
}

// checkSizes bounds the total size of the base's blobs of diffs with one
// `git cat-file --batch-check` and returns their ids, one per line.
func checkSizes(ctx context.Context, s *gitrepo.Scratch, diffs []diffEntry) ([]byte, error) {
	var ids bytes.Buffer
	for _, d := range diffs {
		if d.mode != "000000" {
			ids.WriteString(d.id + "\n")
		}
	}
	if ids.Len() == 0 {
		return nil, nil
	}
	check, err := s.Git(ctx, "", ids.Bytes(), "cat-file", "--batch-check")
	if err != nil {
		return nil, seedErr(err)
	}
	var total int64
	for _, line := range strings.Split(strings.TrimSpace(string(check)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[1] != "blob" {
			return nil, seedErr(fmt.Errorf("unexpected cat-file record %q", line))
		}
		n, _ := strconv.ParseInt(f[2], 10, 64)
		if total += n; total > MaxSeedBytes {
			return nil, fault.New(fault.InputLimit, ReasonSeedTooLarge, fmt.Sprintf("The base commit's difference from HEAD exceeds %d MiB: check it out and delegate there.", MaxSeedBytes>>20))
		}
	}
	return ids.Bytes(), nil
}

// readBlobs reads the base's blobs of diffs with one `git cat-file
// --batch`, after checkSizes bounds their total size.
func readBlobs(ctx context.Context, s *gitrepo.Scratch, diffs []diffEntry) (map[string][]byte, error) {
	blobs := map[string][]byte{}
	ids, err := checkSizes(ctx, s, diffs)
	if err != nil || len(ids) == 0 {
		return blobs, err
	}
	out, err := s.Git(ctx, "", ids, "cat-file", "--batch")
	if err != nil {
		return nil, seedErr(err)
	}
	for len(out) > 0 {
		nl := bytes.IndexByte(out, '\n')
		f := strings.Fields(string(out[:max(nl, 0)]))
		if nl < 0 || len(f) != 3 {
			return nil, seedErr(errors.New("truncated cat-file output"))
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || nl+1+n+1 > len(out) {
			return nil, seedErr(errors.New("truncated cat-file output"))
		}
		blobs[f[0]] = out[nl+1 : nl+1+n]
		out = out[nl+1+n+1:]
	}
	return blobs, nil
}

// seedWriter writes the seed below root; lower is the checkout.
type seedWriter struct {
	root  *os.Root
	lower string
	seed  *Seed
}

// write puts what the base has at d.path into the layer: a file or
// link, or a whiteout when it has nothing. Paths come sorted, so a
// directory's entries follow it and a file that replaced a directory
// comes before that directory's deletions (which it already hides).
func (w *seedWriter) write(d diffEntry, data []byte) error {
	p := filepath.FromSlash(d.path)
	if d.mode == "000000" {
		w.seed.paths[d.path] = seedPath{deleted: true}
		if w.hidden(d.path) {
			return nil
		}
		if err := w.parents(d.path); err != nil {
			return err
		}
		return whiteout(w.root, p)
	}
	if _, ok := blobMode(d.mode); !ok {
		return fmt.Errorf("unexpected mode %s at %q", d.mode, d.path)
	}
	w.seed.paths[d.path] = seedPath{mode: d.mode, id: d.id}
	if err := w.parents(d.path); err != nil {
		return err
	}
	if d.mode == "120000" {
		return w.root.Symlink(string(data), p)
	}
	perm, _ := blobMode(d.mode)
	f, err := w.root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// hidden reports whether an ancestor of p in the layer is not a
// directory (a file of the base that replaced the checkout's directory):
// the checkout's entries below it are hidden already.
func (w *seedWriter) hidden(p string) bool {
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		if st, err := w.root.Lstat(filepath.FromSlash(d)); err == nil && !st.IsDir() {
			return true
		}
	}
	return false
}

// parents makes p's parent directories in the layer: a directory of the
// checkout keeps its mode (the overlay merges them); one the base adds,
// or puts where the checkout or an earlier whiteout has a file, replaces
// that entry and is recorded.
func (w *seedWriter) parents(p string) error {
	var chain []string
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		chain = append(chain, d)
	}
	slices.Reverse(chain)
	for _, d := range chain {
		fp := filepath.FromSlash(d)
		if st, err := w.root.Lstat(fp); err == nil {
			if st.IsDir() {
				continue
			}
			if err := w.root.Remove(fp); err != nil {
				return err
			}
		}
		perm := fs.FileMode(0o755)
		if st, err := os.Lstat(filepath.Join(w.lower, fp)); err == nil && st.IsDir() {
			perm = st.Mode().Perm()
		} else {
			w.seed.dirs[d] = true
		}
		if err := w.root.Mkdir(fp, perm); err != nil {
			return err
		}
		if err := w.root.Chmod(fp, perm); err != nil { // past the umask and an inherited setgid bit
			return err
		}
	}
	return nil
}

// gitState writes .git/HEAD (detached at the base) and .git/index (the
// checkout's index merged two-way from head to the base; from the base's
// tree alone when the checkout's index cannot be merged) into the layer.
func (w *seedWriter) gitState(ctx context.Context, s *gitrepo.Scratch, head string) error {
	st, err := os.Lstat(filepath.Join(w.lower, ".git"))
	if err != nil || !st.IsDir() {
		return errors.New("the workspace's .git is not a directory")
	}
	index := filepath.Join(s.Dir, "index")
	merged := false
	if b, err := os.ReadFile(filepath.Join(s.Repo.GitDir, "index")); err == nil && os.WriteFile(index, b, 0o600) == nil {
		_, err := s.Git(ctx, s.Repo.Top, nil, "read-tree", "-m", "--end-of-options", head, w.seed.Base)
		merged = err == nil
	}
	if !merged {
		_ = os.Remove(index)
		if _, err := s.Git(ctx, "", nil, "read-tree", "--end-of-options", w.seed.Base); err != nil {
			return err
		}
	}
	b, err := os.ReadFile(index)
	if err != nil {
		return err
	}
	if err := w.root.Mkdir(".git", st.Mode().Perm()); err != nil {
		return err
	}
	if err := w.root.Chmod(".git", st.Mode().Perm()); err != nil { // no inherited setgid
		return err
	}
	headFile := []byte(w.seed.Base + "\n")
	for name, data := range map[string][]byte{".git/HEAD": headFile, ".git/index": b} {
		if err := w.root.WriteFile(filepath.FromSlash(name), data, 0o644); err != nil {
			return err
		}
		w.seed.paths[name] = seedPath{mode: "100644", id: w.seed.blobID(data)}
	}
	return nil
}

// blobMode is the file permission of a git blob mode.
func blobMode(mode string) (fs.FileMode, bool) {
	switch mode {
	case "100644":
		return 0o644, true
	case "100755":
		return 0o755, true
	case "120000":
		return fs.ModeSymlink | 0o777, true
	}
	return 0, false
}

// blobID is git's id of a blob holding data.
func (s *Seed) blobID(data []byte) string {
	h := s.newHash()
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// Changes returns the agent's changes against the base, from changes,
// the candidate's changed-file set against the checkout (upper is the
// layer after the run, the agent's processes gone). A path the seed
// wrote is compared with what the base has there, never with the
// checkout: left as the base has it, it is no change; made what the
// checkout has (an edit back to HEAD's content, a file the base lacks
// re-created as HEAD has it, HEAD's executable bit or link target) it is
// a change even though changes does not list it; a base file removed, or
// replaced by a directory, is its deletion. Directories the seed made,
// and directories of the checkout that are gone, are no change of the
// agent's (git tracks their files only), nor is the checkout's untracked
// content that a base file hides. The layer is looked up component by
// component without following a link (an agent's link out of the tree
// in place of a seeded directory is a change, not an unreadable path).
// Errors: PROCESS_ERROR [ReasonRead] when a seeded path cannot be read.
func (s *Seed) Changes(upper string, changes []candidate.Change) ([]candidate.Change, error) {
	root, err := os.OpenRoot(upper)
	if err != nil {
		return nil, fault.Wrap(fault.ProcessError, ReasonRead, "The candidate directory cannot be read.", err)
	}
	defer root.Close()
	readErr := func(p string, err error) error {
		return fault.Wrap(fault.ProcessError, ReasonRead, fmt.Sprintf("The candidate file %q cannot be read.", p), err).With("path", p)
	}
	seen := map[string]bool{}
	var out []candidate.Change
	for _, c := range changes {
		seen[c.Path] = true
		sp, seeded := s.paths[c.Path]
		switch {
		case !seeded && s.dirs[c.Path] && c.Mode.IsDir():
			continue // the seed's own directory
		case !seeded && c.Kind == candidate.Deleted && c.Mode.IsDir():
			// A directory of the checkout that is gone: the base has no
			// file at its path (that would be seeded), and its files are
			// changes of their own (a base file replacing a directory of
			// HEAD lists the directory's subdirectories).
			continue
		case !seeded && s.dirs[c.Path]:
			// The base has a directory here (its files are seeded paths
			// of their own): the entry replaced it.
			c.Kind, c.OldMode = candidate.Modified, fs.ModeDir|0o755
			out = append(out, c)
			continue
		case !seeded && c.Kind == candidate.Deleted && s.belowBaseFile(c.Path):
			// Hidden by a file of the base (the checkout's untracked
			// directory there): the base has nothing below it.
			continue
		case !seeded:
			out = append(out, c)
			continue
		}
		m := layerEntry{Mode: c.Mode, Target: c.Target, present: c.Kind != candidate.Deleted}
		ch, err := s.against(root, c.Path, sp, m)
		if err != nil {
			return nil, readErr(c.Path, err)
		}
		if ch != nil {
			out = append(out, *ch)
		}
	}
	for p, sp := range s.paths {
		if seen[p] {
			continue
		}
		// Not listed: the merged view there is the layer's entry, or
		// nothing (the seed's entry is gone and the checkout's is hidden,
		// or it has none).
		m, err := lookup(root, p)
		if err != nil {
			return nil, readErr(p, err)
		}
		ch, err := s.against(root, p, sp, m)
		if err != nil {
			return nil, readErr(p, err)
		}
		if ch != nil {
			out = append(out, *ch)
		}
	}
	slices.SortFunc(out, func(a, b candidate.Change) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// belowBaseFile reports whether an ancestor of p is a file or link of
// the base that the seed wrote.
func (s *Seed) belowBaseFile(p string) bool {
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		if sp, ok := s.paths[d]; ok && !sp.deleted {
			return true
		}
	}
	return false
}

// layerEntry is what the merged view has at a path after the run.
type layerEntry struct {
	present bool
	Mode    fs.FileMode
	Target  string
}

// lookup returns the upper layer's entry at p, never following a link:
// absent when p or an ancestor is missing, an ancestor is not a
// directory, or p is a whiteout.
func lookup(root *os.Root, p string) (layerEntry, error) {
	parts := strings.Split(p, "/")
	for i := range parts {
		st, err := root.Lstat(filepath.FromSlash(strings.Join(parts[:i+1], "/")))
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			return layerEntry{}, nil
		case err != nil:
			return layerEntry{}, err
		case i < len(parts)-1 && !st.IsDir():
			return layerEntry{}, nil // a file or link where the base has a directory: nothing below it
		case i == len(parts)-1:
			if st.Mode()&fs.ModeCharDevice != 0 {
				return layerEntry{}, nil // a whiteout (candidate.Changes refuses any other device)
			}
			e := layerEntry{present: true, Mode: st.Mode()}
			if st.Mode()&fs.ModeSymlink != 0 {
				if e.Target, err = root.Readlink(filepath.FromSlash(p)); err != nil {
					return layerEntry{}, err
				}
			}
			return e, nil
		}
	}
	return layerEntry{}, nil
}

// against returns the change at seeded path p from what the base has
// there (sp) to what the merged view has (m), nil when they are the same.
func (s *Seed) against(root *os.Root, p string, sp seedPath, m layerEntry) (*candidate.Change, error) {
	base, _ := blobMode(sp.mode)
	switch {
	case sp.deleted && (!m.present || m.Mode.IsDir()):
		return nil, nil // nothing in the base, nothing (or only a directory, whose files are changes of their own) now
	case sp.deleted:
		return &candidate.Change{Path: p, Kind: candidate.Added, Mode: m.Mode, Target: m.Target}, nil
	case !m.present:
		return &candidate.Change{Path: p, Kind: candidate.Deleted, Mode: base, OldMode: base}, nil
	case m.Mode.IsDir():
		// A directory where the base has a file: the file's removal.
		return &candidate.Change{Path: p, Kind: candidate.Modified, Mode: m.Mode, OldMode: base}, nil
	}
	same, err := s.sameBlob(root, p, sp, m)
	if err != nil || same {
		return nil, err
	}
	return &candidate.Change{Path: p, Kind: candidate.Modified, Mode: m.Mode, OldMode: base, Target: m.Target}, nil
}

// sameBlob reports whether the merged entry m at p (a file or link) is
// the seed's blob sp: the same type, executable bit and bytes.
func (s *Seed) sameBlob(root *os.Root, p string, sp seedPath, m layerEntry) (bool, error) {
	want, _ := blobMode(sp.mode)
	if m.Mode.Type() != want.Type() || (m.Mode&0o111 != 0) != (want&0o111 != 0) {
		return false, nil
	}
	if m.Mode&fs.ModeSymlink != 0 {
		return s.blobID([]byte(m.Target)) == sp.id, nil
	}
	f, err := root.Open(filepath.FromSlash(p)) // lstat'ed a regular file (the agent is gone)
	if err != nil {
		return false, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxPatchBytes+1))
	if err != nil {
		return false, err
	}
	return s.blobID(data) == sp.id, nil
}

func seedErr(err error) error {
	return fault.Wrap(fault.ProcessError, ReasonSeed, "The candidate could not be started from the base commit.", err)
}
