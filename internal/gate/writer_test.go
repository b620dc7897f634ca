package gate

import (
	"context"
	"testing"
	"time"
)

// TestCheckpointsOffRequestPath: the writer connection checkpoints by
// itself only past walValve pages, and the watcher's background
// checkpoint picks up what a request wrote.
func TestCheckpointsOffRequestPath(t *testing.T) {
	f := newFixture(t, nil)
	w := f.gate.ledger.w
	var n int
	if err := w.conn.QueryRowContext(context.Background(), "PRAGMA wal_autocheckpoint").Scan(&n); err != nil || n != walValve {
		t.Errorf("writer wal_autocheckpoint %d (err %v), want %d", n, err, walValve)
	}
	gr, phantom := f.grant(spec(Anthropic))
	readAll(t, f.call(Anthropic, phantom, gr.Model, true))
	f.settled(gr.ID)
	deadline := time.Now().Add(5 * time.Second)
	for w.dirty.Load() {
		if time.Now().After(deadline) {
			t.Fatal("no background checkpoint after the request's writes")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
