//go:build linux && amd64

package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// Artifact collection bounds.
const (
	maxArtifacts     = 1000
	maxArtifactBytes = 256 << 20
	maxArtifactDepth = 16
	// maxArtifactsRejected bounds the rejected entries a receipt names;
	// past it one more entry says that more were left (rejectedMore).
	maxArtifactsRejected = 100
	// artifactBatch is how many directory entries are read at a time.
	artifactBatch     = 256
	resolveJobBeneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV
)

// collector walks the artifacts folder host-side with openat2 so nothing
// the child left (symlinks, special files, renamed directories) can make
// the supervisor read or write outside the job root (notes §3 step 12,
// test 9).
type collector struct {
	to       string
	arts     []Artifact
	rejected []string
	more     bool // an entry was left unnamed (maxArtifactsRejected)
	bytes    int64
}

// rejectedMore is the receipt's last rejected entry when more were left
// than it names.
const rejectedMore = "…: more entries left, not collected and not named"

func collectArtifacts(root, to string) ([]Artifact, []string, error) {
	if os.Geteuid() != 0 {
		// The command (namespace root) may have made an artifact mode
		// 000, which a root supervisor reads anyway and we could not
		// (rejected "unopenable"); the tree has ended.
		grantOwner(unix.AT_FDCWD, filepath.Join(root, "artifacts"), 0, 0o400)
	}
	rfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, unavailable("artifacts", "an openable job root", err)
	}
	defer unix.Close(rfd)
	c := &collector{to: to, arts: []Artifact{}}
	dfd, err := openBeneath(rfd, "artifacts", unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, nil, unavailable("artifacts", "an openable artifacts folder", err)
	}
	c.walk(dfd, "", 0)
	if c.more {
		c.rejected = append(c.rejected, rejectedMore)
	}
	return c.arts, c.rejected, nil
}

func openBeneath(dirfd int, name string, flags uint64) (int, error) {
	return unix.Openat2(dirfd, name, &unix.OpenHow{Flags: flags | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: resolveJobBeneath})
}

// walk consumes dfd. The folder is the command's and may hold millions
// of entries: they are read a batch at a time, and the walk stops once
// nothing more can be collected or named (full), so the supervisor, which
// the sandbox's memory ceiling does not bound, holds one batch per level
// and the receipt a bounded list.
func (c *collector) walk(dfd int, rel string, depth int) {
	d := os.NewFile(uintptr(dfd), "artifacts")
	defer d.Close()
	for !c.full() {
		ents, err := d.ReadDir(artifactBatch)
		c.entries(dfd, rel, depth, ents)
		if err != nil {
			return // io.EOF, or unreadable: what was read is collected
		}
	}
}

// full reports whether no further entry can be collected or named.
func (c *collector) full() bool {
	return len(c.arts) >= maxArtifacts && c.more
}

func (c *collector) entries(dfd int, rel string, depth int, ents []os.DirEntry) {
	for _, e := range ents {
		if c.full() {
			return
		}
		name := path.Join(rel, e.Name())
		if hasControl(e.Name()) || depth >= maxArtifactDepth || len(c.arts) >= maxArtifacts {
			c.reject(name, "name or bound")
			continue
		}
		switch {
		case e.Type().IsDir():
			if fd, err := openBeneath(dfd, e.Name(), unix.O_RDONLY|unix.O_DIRECTORY); err == nil {
				c.walk(fd, name, depth+1)
			} else {
				c.reject(name, "unopenable directory")
			}
		case e.Type().IsRegular():
			c.file(dfd, e.Name(), name)
		default:
			c.reject(name, "not a regular file")
		}
	}
}

func (c *collector) reject(name, why string) {
	if len(c.rejected) >= maxArtifactsRejected {
		c.more = true
		return
	}
	c.rejected = append(c.rejected, strconv.Quote(name)+": "+why)
}

func (c *collector) file(dfd int, base, rel string) {
	fd, err := openBeneath(dfd, base, unix.O_RDONLY)
	if err != nil {
		c.reject(rel, "unopenable")
		return
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || c.bytes+fi.Size() > maxArtifactBytes {
		c.reject(rel, "not regular or over the size bound")
		return
	}
	c.bytes += fi.Size()
	h := sha256.New()
	var w io.Writer = h
	var out *os.File
	if c.to != "" {
		if out, err = createBeneath(c.to, rel); err != nil {
			c.reject(rel, "cannot copy out")
			return
		}
		defer out.Close()
		w = io.MultiWriter(h, out)
	}
	n, _ := io.Copy(w, io.LimitReader(f, fi.Size()))
	c.arts = append(c.arts, Artifact{Path: rel, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))})
}

// createBeneath creates to/rel exclusively, never following symlinks.
func createBeneath(to, rel string) (*os.File, error) {
	dst := filepath.Join(to, rel)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o644)
}
