package admission

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// recover finishes every committed journal and discards every pending
// admission without one (its staging directory only; the checkout was not
// written before the commit point).
func (a *Admitter) recover(ctx context.Context) error {
	ents, err := os.ReadDir(a.dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, ".journal"):
			if err := a.recoverJournal(ctx, filepath.Join(a.dir, name)); err != nil {
				return err
			}
		case strings.HasSuffix(name, ".journal.tmp"):
			os.Remove(filepath.Join(a.dir, name))
		}
	}
	ents, _ = os.ReadDir(a.dir)
	for _, e := range ents {
		if id, ok := strings.CutSuffix(e.Name(), ".pending"); ok {
			if _, err := os.Stat(a.journalPath(id)); os.IsNotExist(err) {
				a.discardPending(id)
			}
		}
	}
	return nil
}

func (a *Admitter) recoverJournal(ctx context.Context, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var jr journal
	if err := json.Unmarshal(b, &jr); err != nil {
		return err
	}
	_, err = a.finish(ctx, &jr)
	return err
}

func (a *Admitter) discardPending(id string) {
	p := a.pendingPath(id)
	if b, err := os.ReadFile(p); err == nil {
		// Only a staging directory this package names may be removed.
		if s := string(b); filepath.IsAbs(s) && strings.HasPrefix(filepath.Base(s), "coagent8-admit-") {
			os.RemoveAll(s)
		}
	}
	os.Remove(p)
}
