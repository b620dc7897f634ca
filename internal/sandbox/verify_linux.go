//go:build linux && amd64

package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// verifyView is the verify profile's version: it changes whenever the
// view below changes in a way the digests would not show.
const verifyViewVersion = "verify/1 overlay lowerdir=upper:workspace userxattr ro"

// verifyPolicyDigest is the verify profile's policy: the task policy
// (which qualification binds, verify probes included) and the view.
func verifyPolicyDigest() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\nprofile %s idmap-to %d\n", policyDigest(), verifyViewVersion, nobody)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// verifyLower is where the workspace tree is attached, inside the fresh
// root's tmpfs, until the overlay holds it.
const verifyLower = "/.verify-lower"

// verifyView plans the read-only candidate at root/job/workspace: an
// overlay with two lower layers and no upper one (overlayfs mounts that
// read-only; MS_RDONLY says so as well), the candidate's upper directory
// above the workspace (the supervisor's idmapped read-only tree when
// fdTree ≥ 0, as for the read profile, else a read-only clone PID 1
// makes). The upper layer's whiteouts and opaque directories (userxattr,
// as the candidate's mount wrote them) hide what the agent deleted. The
// attachLower puts the workspace read-only at lower, an overlay's lower
// layer: the idmapped tree fdTree when there is one (it is closed), else a
// read-only clone of ws. profile names the steps ("read", "verify").
func (p *plan) attachLower(profile, ws, lower string, fdTree int) {
	if fdTree >= 0 {
		p.call(profile+": attach the idmapped workspace", unix.SYS_MOVE_MOUNT, uintptr(fdTree), p.cstr(""), atFDCWD,
			p.cstr(lower), unix.MOVE_MOUNT_F_EMPTY_PATH)
		p.call(profile+": attach the idmapped workspace", unix.SYS_CLOSE, uintptr(fdTree))
		return
	}
	p.cloneInto(ws, lower)
	p.setattr(profile+": read-only lower layer", lower, attrRO, true)
}

// overlay keeps private clones of its layers, so the workspace tree is
// detached and its mount point removed before the command starts.
func (p *plan) verifyView(ws, upper, root string, fdTree int) {
	lower := root + verifyLower
	p.mkdir("verify: lower-layer mount point", lower, 0o700)
	p.attachLower("verify", ws, lower, fdTree)
	dst := root + insideWorkspace
	p.mkdirAll("mount point "+insideWorkspace, root, dst)
	p.mount("verify: read-only candidate overlay", "overlay", dst, "overlay", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV,
		"lowerdir="+upper+":"+lower+",userxattr")
	p.call("verify: detach the lower tree", unix.SYS_UMOUNT2, p.cstr(lower), unix.MNT_DETACH)
	p.call("verify: remove the lower-layer mount point", unix.SYS_UNLINKAT, atFDCWD, p.cstr(lower), unix.AT_REMOVEDIR)
}

// verifyFixture builds the verify probes' candidate: a workspace with
// files "base", "edited" and "deleted", and an upper layer that edits
// "edited", adds "added" and deletes "deleted" (a whiteout, as overlayfs
// writes one). The host check: neither layer changed.
func verifyFixture(h *probeHost) ([]string, func(Receipt) (bool, string)) {
	ws, up := filepath.Join(h.dir, "ws"), filepath.Join(h.dir, "upper")
	files := map[string]string{"ws/base": "lower", "ws/edited": "old", "ws/deleted": "gone", "upper/edited": "new", "upper/added": "new"}
	var err error
	for _, d := range []string{ws, up} {
		err = errors.Join(err, os.Mkdir(d, 0o755))
	}
	for name, body := range files {
		err = errors.Join(err, os.WriteFile(filepath.Join(h.dir, name), []byte(body), 0o644))
	}
	err = errors.Join(err, unix.Mknod(filepath.Join(up, "deleted"), unix.S_IFCHR|0o600, 0))
	return nil, func(Receipt) (bool, string) {
		if err != nil {
			return false, "fixture: " + err.Error()
		}
		for name, body := range files {
			if ok, d := unchanged(filepath.Join(h.dir, name), body); !ok {
				return false, d
			}
		}
		ents, _ := os.ReadDir(ws)
		ups, _ := os.ReadDir(up)
		return len(ents) == 3 && len(ups) == 3, fmt.Sprintf("layers unchanged (%d and %d entries)", len(ents), len(ups))
	}
}

// verifyTCP is hostTCP on the verify fixture.
func verifyTCP(h *probeHost) ([]string, func(Receipt) (bool, string)) {
	_, layers := verifyFixture(h)
	args, check := hostTCP(h)
	return args, func(r Receipt) (bool, string) {
		ok, d := check(r)
		lok, ld := layers(r)
		return ok && lok, d + "; " + ld
	}
}

// probeVerifyView runs inside the verify profile: the candidate reads
// merged (the upper layer's edit and addition, the deletion hidden, the
// base untouched), every way of writing it fails, and scratch is
// writable.
func probeVerifyView([]string) (bool, string) {
	w := insideWorkspace + "/"
	want := map[string]string{"base": "lower", "edited": "new", "added": "new"}
	for name, body := range want {
		if b, err := os.ReadFile(w + name); err != nil || string(b) != body {
			return false, fmt.Sprintf("read %s: %q (%v), want %q", name, b, err, body)
		}
	}
	if _, err := os.Lstat(w + "deleted"); !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Sprintf("the deleted file is visible (%v)", err)
	}
	at := map[string]error{
		"create":    os.WriteFile(w+"new", []byte("x"), 0o644),
		"overwrite": os.WriteFile(w+"edited", []byte("x"), 0o644),
		"remove":    os.Remove(w + "base"),
		"mkdir":     os.Mkdir(w+"dir", 0o755),
		"rename":    os.Rename(w+"added", w+"moved"),
		"chmod":     os.Chmod(w+"base", 0o777),
		"symlink":   os.Symlink("/etc", w+"link"),
	}
	ok, d := allFail(at)
	if err := os.WriteFile(insideScratch+"/ok", []byte("x"), 0o644); err != nil {
		return false, "scratch not writable: " + err.Error()
	}
	return ok, d
}
