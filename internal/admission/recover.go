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
// written before the commit point). An entry whose pending lock a live
// process holds is in progress and left alone.
func (a *Admitter) recover(ctx context.Context) error {
	ents, err := os.ReadDir(a.dir)
	if err != nil {
		return err
	}
	ids := map[string]bool{}
	for _, e := range ents {
		name := e.Name()
		for _, suf := range []string{".pending", ".journal"} {
			if id, ok := strings.CutSuffix(name, suf); ok {
				ids[id] = true
			}
		}
	}
	for id := range ids {
		if err := a.recoverOne(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

func (a *Admitter) recoverOne(ctx context.Context, id string) error {
	lock, ok, err := lockPending(a.pendingPath(id))
	if err != nil || !ok {
		return nil // in progress elsewhere, or no locking here: leave it
	}
	defer lock.Close()
	os.Remove(a.journalPath(id) + ".tmp")
	b, err := os.ReadFile(a.journalPath(id))
	if os.IsNotExist(err) {
		a.discardPending(id)
		return nil
	}
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
