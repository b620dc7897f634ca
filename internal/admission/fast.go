package admission

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The fast path (issue 16 Performance: a 10-file admission ≤ 100 ms).
//
// When every path the patch touches is, byte for byte, the preimage the
// patch records (its full-index blob id and mode), the checkout has not
// moved for those paths and no content conversion can be in play (the raw
// bytes hash to the blob). Then the preimages are copied into the staging
// directory and one `git apply`, run there outside any repository, makes
// the staged result: one git process instead of three. Anything else — a
// moved checkout, a section without an index line (a pure rename or mode
// change), a .gitattributes at the top or in info/attributes, an unusual
// header — takes the general path (scratch index, three-way fallback).

// section is one file of a git patch.
type section struct {
	oldPath, newPath string // "" for an added / deleted file's missing side
	oldID            string
	oldMode          string // "100644", "100755", "120000"; "" for an added file
	newFile, deleted bool
}

// parseSections reads the file sections of a git patch; ok is false for
// anything the fast path does not handle.
func parseSections(patch []byte) ([]section, bool) {
	var out []section
	var cur *section
	for _, line := range bytes.Split(patch, []byte("\n")) {
		s := string(line)
		switch {
		case strings.HasPrefix(s, "diff --git "):
			p, ok := headerPath(strings.TrimPrefix(s, "diff --git "))
			if !ok || p == "" {
				return nil, false // renames and odd headers: general path
			}
			out = append(out, section{oldPath: p, newPath: p})
			cur = &out[len(out)-1]
		case cur == nil:
		case strings.HasPrefix(s, "new file mode "):
			cur.newFile, cur.oldPath = true, ""
		case strings.HasPrefix(s, "deleted file mode "):
			cur.deleted, cur.newPath, cur.oldMode = true, "", strings.TrimPrefix(s, "deleted file mode ")
		case strings.HasPrefix(s, "old mode "), strings.HasPrefix(s, "new mode "),
			strings.HasPrefix(s, "rename "), strings.HasPrefix(s, "copy "):
			return nil, false
		case strings.HasPrefix(s, "index "):
			ids, mode, _ := strings.Cut(strings.TrimPrefix(s, "index "), " ")
			old, _, ok := strings.Cut(ids, "..")
			if !ok || cur.oldID != "" {
				return nil, false
			}
			cur.oldID = old
			if mode != "" {
				cur.oldMode = mode
			}
		}
	}
	for _, sec := range out {
		if !sec.newFile && (sec.oldID == "" || sec.oldMode == "") {
			return nil, false
		}
	}
	return out, len(out) > 0
}

// fastEligible reports whether the checkout holds exactly every preimage.
func fastEligible(top, gitDir string, secs []section) bool {
	for _, p := range []string{filepath.Join(top, ".gitattributes"), filepath.Join(gitDir, "info", "attributes")} {
		if _, err := os.Lstat(p); err == nil {
			return false
		}
	}
	for _, s := range secs {
		if s.newFile {
			if _, err := os.Lstat(filepath.Join(top, filepath.FromSlash(s.newPath))); err == nil {
				return false
			}
			continue
		}
		if !holdsBlob(filepath.Join(top, filepath.FromSlash(s.oldPath)), s.oldMode, s.oldID) {
			return false
		}
	}
	return true
}

// holdsBlob reports whether path is a file or symlink of git mode with
// exactly the blob id's raw content.
func holdsBlob(path, mode, id string) bool {
	data, ok := readAs(path, mode)
	if !ok {
		return false
	}
	var h hash.Hash
	switch len(id) {
	case 40:
		h = sha1.New()
	case 64:
		h = sha256.New()
	default:
		return false
	}
	fmt.Fprintf(h, "blob %d\x00", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil)) == id
}

// readAs returns the raw content (a symlink's target) of path when its
// type and executable bit match git mode.
func readAs(path, mode string) ([]byte, bool) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, false
	}
	switch {
	case mode == "120000" && st.Mode()&fs.ModeSymlink != 0:
		t, err := os.Readlink(path)
		return []byte(t), err == nil
	case mode == "100755" && st.Mode().IsRegular() && st.Mode()&0o100 != 0,
		mode == "100644" && st.Mode().IsRegular() && st.Mode()&0o100 == 0:
		b, err := os.ReadFile(path)
		return b, err == nil
	}
	return nil, false
}

// stageFast copies the preimages into the staging directory and applies
// the patch there with one git process outside any repository.
func (a *Admitter) stageFast(ctx context.Context, p *plan, secs []section, staging string) error {
	for _, s := range secs {
		if s.newFile {
			continue
		}
		if err := copyPre(filepath.Join(p.repo.Top, filepath.FromSlash(s.oldPath)), filepath.Join(staging, filepath.FromSlash(s.oldPath)), s.oldMode); err != nil {
			return applyError(err)
		}
	}
	// GIT_CEILING_DIRECTORIES stops discovery at the git directory that
	// holds the staging directory: the apply sees no repository, config or
	// attributes, exactly as the eligibility check assumed.
	if _, err := p.repo.Run(ctx, staging, []string{"GIT_CEILING_DIRECTORIES=" + filepath.Dir(staging)}, p.patch,
		"apply", "--whitespace=nowarn", "-"); err != nil {
		return applyError(err)
	}
	return nil
}

func copyPre(src, dst, mode string) error {
	data, ok := readAs(src, mode)
	if !ok {
		return fmt.Errorf("preimage changed: %s", filepath.Base(src))
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	if mode == "120000" {
		return os.Symlink(string(data), dst)
	}
	perm := fs.FileMode(0o644)
	if mode == "100755" {
		perm = 0o755
	}
	return os.WriteFile(dst, data, perm)
}
