package quarantine

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/coagent8/coagent8/internal/candidate"
	"github.com/coagent8/coagent8/internal/fault"
	"github.com/coagent8/coagent8/internal/gitrepo"
)

// MaxPatchBytes bounds a candidate patch (and so the job store row).
const MaxPatchBytes = 16 << 20

// MaxReadBytes bounds the content of every candidate file a build reads
// in all (each is bounded by MaxPatchBytes; the walk admits a million).
const MaxReadBytes = 16 * MaxPatchBytes

// Reasons of the typed errors of this package.
const (
	ReasonBase     = "quarantine.base"
	ReasonRead     = "quarantine.read"
	ReasonTooLarge = "quarantine.too_large"
	ReasonBuild    = "quarantine.build"
)

// Input is what [Build] reads.
type Input struct {
	// Repo is the user's repository; its objects are read, never written.
	Repo *gitrepo.Repo
	// Base is the commit (or tree) the candidate started from.
	Base string
	// Objects are extra object directories Base's objects are read from
	// (an `uncommitted` base: [SplitBase]); nil for a commit.
	Objects []string
	// Upper is the directory holding the new content of every Added or
	// Modified path (the overlay upper directory, or any tree with them).
	Upper string
	// Changes is the candidate's changed-file set ([candidate.Changes]).
	Changes []candidate.Change
	// ScratchDir is where the scratch object directory is made ("" = the
	// system temp directory); it is removed before Build returns.
	ScratchDir string
}

// Candidate is a built, scanned patch. Patch is untrusted bytes.
type Candidate struct {
	// Patch is `git diff-tree -p --binary --full-index -M` of BaseTree
	// against Tree: binary-safe, with renames and mode changes.
	Patch []byte
	// Digest is "sha256:" + hex of Patch.
	Digest string
	// BaseTree and Tree are the tree ids before and after.
	BaseTree, Tree string
	// Findings are the structural and content findings, in path order.
	Findings []Finding
}

// Digest returns "sha256:" + the hex SHA-256 of b.
func Digest(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// Build writes the candidate's new content as blobs into a scratch object
// directory, builds the tree Base + Changes there, and returns the patch
// between the two trees and its findings. Errors: INVALID_INPUT
// quarantine.base (Base is not in the repository), PROCESS_ERROR
// quarantine.read (a changed file cannot be read as what the change says),
// INPUT_LIMIT quarantine.too_large (a file or the patch over
// [MaxPatchBytes], the files over [MaxReadBytes] in all).
func Build(ctx context.Context, in Input) (*Candidate, error) {
	s, err := in.Repo.ScratchWith(in.ScratchDir, in.Objects...)
	if err != nil {
		return nil, fault.Wrap(fault.ProcessError, ReasonBuild, "The candidate patch could not be built.", err)
	}
	defer s.Close()
	b := &builder{s: s, in: in}
	if err := b.start(ctx); err != nil {
		return nil, err
	}
	if err := b.stage(ctx); err != nil {
		return nil, err
	}
	return b.finish(ctx)
}

type builder struct {
	s         *gitrepo.Scratch
	in        Input
	root      *os.Root
	newHash   func() hash.Hash
	baseTree  string
	index     bytes.Buffer // update-index -z --index-info records (NUL-terminated: a name may hold a newline)
	findings  []Finding
	readBytes int64 // content bytes of the candidate's files so far ([MaxReadBytes])
}

func (b *builder) start(ctx context.Context) error {
	// One read-tree both checks Base and loads its tree: the base tree id
	// is then read back from the cache tree read-tree primes in the
	// scratch index (baseFromIndex), sparing the rev-parse process a job
	// paid for it; on any doubt about that index, rev-parse answers.
	if _, err := b.s.Git(ctx, "", nil, "read-tree", "--end-of-options", b.in.Base+"^{tree}"); err != nil {
		if _, verr := b.s.Git(ctx, "", nil, "rev-parse", "--verify", "--end-of-options", b.in.Base+"^{tree}"); verr != nil {
			return fault.Wrap(fault.InvalidInput, ReasonBase, "The candidate's base is not a commit of the workspace.", verr)
		}
		return fault.Wrap(fault.ProcessError, ReasonBuild, "The candidate patch could not be built.", err)
	}
	if tree, newHash, ok := indexBase(filepath.Join(b.s.Dir, "index")); ok {
		b.baseTree, b.newHash = tree, newHash
	} else {
		out, err := b.s.Git(ctx, "", nil, "rev-parse", "--verify", "--end-of-options", b.in.Base+"^{tree}")
		if err != nil {
			return fault.Wrap(fault.InvalidInput, ReasonBase, "The candidate's base is not a commit of the workspace.", err)
		}
		b.baseTree = strings.TrimSpace(string(out))
		b.newHash = sha1.New
		if len(b.baseTree) == 64 {
			b.newHash = sha256.New
		}
	}
	var err error
	b.root, err = os.OpenRoot(b.in.Upper)
	if err != nil {
		return fault.Wrap(fault.ProcessError, ReasonRead, "The candidate directory cannot be read.", err)
	}
	return nil
}

// stage turns each change into index-info lines; unrepresentable changes
// become findings only.
func (b *builder) stage(ctx context.Context) error {
	defer b.root.Close()
	state := 0
	for _, c := range b.in.Changes {
		if repoState(c.Path) {
			state++
			continue
		}
		found := ScanChange(c)
		b.findings = append(b.findings, found...)
		if excluded(found) {
			continue
		}
		if err := b.stageOne(c); err != nil {
			return err
		}
	}
	if state > 0 {
		b.findings = append(b.findings, Finding{Rule: RuleRepoState, Severity: Warn, Path: ".git",
			Message: fmt.Sprintf("the agent changed %d path(s) of its copy of the git directory (commits, the index, config or hooks); they stay in the candidate and are not part of the patch", state)})
	}
	if _, err := b.s.Git(ctx, "", b.index.Bytes(), "update-index", "-z", "--index-info"); err != nil {
		return fault.Wrap(fault.ProcessError, ReasonBuild, "The candidate patch could not be built.", err)
	}
	return nil
}

// repoState reports whether workspace path p is the candidate's own
// repository state: the workspace's top-level ".git" (the workspace is
// its work tree's top level, gitrepo.Open), exactly so named, and
// anything below it. An agent that runs `git status` rewrites the index
// in its copy-on-write view; one that commits adds objects and moves its
// branch. Those bytes never reach the host (admission applies the patch
// only, and host git never reads the candidate's .git), so they are left
// out of the patch with one warning rather than blocking every job whose
// agent used git. Any other ".git" component (a nested repository, a case
// or trailing-dot alias) is still [RuleGitDir] and blocks.
func repoState(p string) bool { return p == ".git" || strings.HasPrefix(p, ".git/") }

// excluded reports whether findings keep the change out of the patch.
func excluded(found []Finding) bool {
	for _, f := range found {
		if f.Rule == RuleOutside || f.Rule == RuleGitDir || f.Rule == RuleSpecial {
			return true
		}
	}
	return false
}

func (b *builder) stageOne(c candidate.Change) error {
	zero := strings.Repeat("0", b.newHash().Size()*2)
	if c.Kind == candidate.Deleted || c.Mode.IsDir() {
		// A directory holds no blob; a file it replaced is removed, and its
		// children are changes of their own.
		if c.Kind == candidate.Deleted || !c.OldMode.IsDir() && c.OldMode != 0 {
			fmt.Fprintf(&b.index, "0 %s\t%s\x00", zero, c.Path)
		}
		return nil
	}
	data, mode, err := b.read(c)
	if err != nil {
		return err
	}
	id, err := b.writeBlob(data)
	if err != nil {
		return fault.Wrap(fault.ProcessError, ReasonBuild, "The candidate patch could not be built.", err)
	}
	if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
		b.findings = append(b.findings, scanContent(c.Path, data)...)
	}
	fmt.Fprintf(&b.index, "%s %s\t%s\x00", mode, id, c.Path)
	return nil
}

// read returns the content and git mode of an added or modified path; the
// file on disk must still be what the change describes.
func (b *builder) read(c candidate.Change) ([]byte, string, error) {
	fail := func(err error) ([]byte, string, error) {
		return nil, "", fault.Wrap(fault.ProcessError, ReasonRead, fmt.Sprintf("The candidate file %q cannot be read.", c.Path), err).With("path", c.Path)
	}
	st, err := b.root.Lstat(filepath.FromSlash(c.Path))
	if err != nil {
		return fail(err)
	}
	if st.Mode().Type() != c.Mode.Type() {
		return fail(fmt.Errorf("type changed since the walk"))
	}
	if c.Mode&fs.ModeSymlink != 0 {
		t, err := b.root.Readlink(filepath.FromSlash(c.Path))
		if err != nil {
			return fail(err)
		}
		return []byte(t), "120000", nil
	}
	// Checked before reading, by the size the file says it has (a sparse
	// file costs the agent no disk, the build its whole length).
	if b.readBytes+min(st.Size(), MaxPatchBytes+1) > MaxReadBytes {
		return nil, "", fault.New(fault.InputLimit, ReasonTooLarge, fmt.Sprintf(
			"The candidate's files exceed %d MiB in all, more than a candidate patch can carry.", MaxReadBytes>>20)).With("path", c.Path)
	}
	f, err := b.root.Open(filepath.FromSlash(c.Path))
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxPatchBytes+1))
	if err != nil {
		return fail(err)
	}
	if len(data) > MaxPatchBytes {
		return nil, "", fault.New(fault.InputLimit, ReasonTooLarge, "A candidate file exceeds the patch size limit.").With("path", c.Path)
	}
	if b.readBytes += int64(len(data)); b.readBytes > MaxReadBytes {
		return nil, "", fault.New(fault.InputLimit, ReasonTooLarge, fmt.Sprintf(
			"The candidate's files exceed %d MiB in all, more than a candidate patch can carry.", MaxReadBytes>>20)).With("path", c.Path)
	}
	if st.Mode()&0o111 != 0 {
		return data, "100755", nil
	}
	return data, "100644", nil
}

// writeBlob writes data as a loose object into the scratch object
// directory and returns its id (git's object format: zlib of
// "blob <len>\x00" + data, named by its hash).
func (b *builder) writeBlob(data []byte) (string, error) {
	hdr := fmt.Sprintf("blob %d\x00", len(data))
	h := b.newHash()
	h.Write([]byte(hdr))
	h.Write(data)
	id := hex.EncodeToString(h.Sum(nil))
	dir := filepath.Join(b.s.Objects(), id[:2])
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	// Named by its content: an object already there is these bytes (two
	// files of one content). Writing it again would open a 0400 file for
	// writing, which only root may.
	if _, err := os.Lstat(filepath.Join(dir, id[2:])); err == nil {
		return id, nil
	}
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write([]byte(hdr))
	w.Write(data)
	if err := w.Close(); err != nil {
		return "", err
	}
	return id, os.WriteFile(filepath.Join(dir, id[2:]), z.Bytes(), 0o400)
}

func (b *builder) finish(ctx context.Context) (*Candidate, error) {
	out, err := b.s.Git(ctx, "", nil, "write-tree")
	if err != nil {
		return nil, fault.Wrap(fault.ProcessError, ReasonBuild, "The candidate patch could not be built.", err)
	}
	tree := strings.TrimSpace(string(out))
	// The scratch index holds the candidate's tree, its .gitattributes
	// included, and diff-tree (whose work tree is the scratch directory)
	// reads attributes from it: "* binary" there made every file a base85
	// patch that the line scan cannot read and the user cannot review.
	// The tree is written, so the index goes: the patch is shaped by
	// git's own binary heuristic (a NUL byte), which stageOne's content
	// scan follows.
	if err := os.Remove(filepath.Join(b.s.Dir, "index")); err != nil {
		return nil, fault.Wrap(fault.ProcessError, ReasonBuild, "The candidate patch could not be built.", err)
	}
	patch, err := b.s.Git(ctx, "", nil, "diff-tree", "-p", "--binary", "--full-index", "-M", "--no-color",
		"--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", b.baseTree, tree)
	if err != nil {
		return nil, fault.Wrap(fault.ProcessError, ReasonBuild, "The candidate patch could not be built.", err)
	}
	if len(patch) > MaxPatchBytes {
		return nil, fault.New(fault.InputLimit, ReasonTooLarge, "The candidate patch exceeds its size limit.")
	}
	found := append(b.findings, ScanPatch(patch)...)
	return &Candidate{Patch: patch, Digest: Digest(patch), BaseTree: b.baseTree, Tree: tree, Findings: found}, nil
}
