package admission

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// op is one roll-forward operation: rename Staged over Target, or remove
// Target when Staged is "". Paths are relative (Target to the work tree,
// Staged to the staging directory).
type op struct {
	Target string `json:"target"`
	Staged string `json:"staged,omitempty"`
}

// journal is the committed record of an admission (see the package doc).
type journal struct {
	Job      string `json:"job"`
	Digest   string `json:"digest"`
	Actor    string `json:"actor"`
	Top      string `json:"top"`
	Staging  string `json:"staging"`
	ThreeWay bool   `json:"three_way"`
	// Ack lists what the user acknowledged (e.g. the taint).
	Ack []string `json:"ack,omitempty"`
	Ops []op     `json:"ops"`
}

func (a *Admitter) journalPath(id string) string { return filepath.Join(a.dir, id+".journal") }
func (a *Admitter) pendingPath(id string) string { return filepath.Join(a.dir, id+".pending") }

// commit writes the journal durably and renames it into place: the commit
// point of the admission.
func (a *Admitter) commit(j *journal) error {
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	tmp := a.journalPath(j.Job) + ".tmp"
	if err := writeSync(tmp, b, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, a.journalPath(j.Job)); err != nil {
		return err
	}
	return syncDir(a.dir)
}

// rollForward performs the journal's operations; each is idempotent, so a
// journal interrupted at any point is finished by running it again.
func (a *Admitter) rollForward(j *journal) error {
	for i, o := range j.Ops {
		target := filepath.Join(j.Top, filepath.FromSlash(o.Target))
		var err error
		if o.Staged == "" {
			err = removeTarget(j.Top, target)
		} else {
			err = putTarget(filepath.Join(j.Staging, o.Staged), target)
		}
		if err != nil {
			return err
		}
		if a.o.testOnlyStep != nil {
			a.o.testOnlyStep(stepOp + i)
		}
	}
	return nil
}

// removeTarget removes target and then its parents up to top that became
// empty (as git apply does).
func removeTarget(top, target string) error {
	// ENOTDIR: a replayed journal finds a file where the directory was
	// (a directory replaced by a file): the target is gone already.
	if err := os.Remove(target); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		return err
	}
	for d := filepath.Dir(target); d != top && len(d) > len(top); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			break
		}
	}
	return nil
}

// putTarget renames staged over target. A staged file already gone means
// an earlier run did this rename.
func putTarget(staged, target string) error {
	if _, err := os.Lstat(staged); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	return os.Rename(staged, target)
}

func writeSync(path string, b []byte, perm fs.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	_ = d.Sync() // not supported everywhere (windows); the rename stands
	return nil
}
