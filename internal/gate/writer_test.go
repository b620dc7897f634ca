package gate

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/coagent8/coagent8/internal/providertest"
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

// TestSettlesAfterClose: a stream that outlives Close is still settled
// (through the pool, the writer connection being gone).
func TestSettlesAfterClose(t *testing.T) {
	f := newFixture(t, nil)
	f.anth.Script(providertest.Reply{Chunks: 10, ChunkDelay: 20 * time.Millisecond, InputTokens: 300, OutputTokens: 200})
	gr, phantom := f.grant(spec(Anthropic))
	resp := f.call(Anthropic, phantom, gr.Model, true)
	br := firstEvent(t, resp)
	if err := f.gate.Close(); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, br)
	resp.Body.Close()
	if got := f.settled(gr.ID); got.Used.Tokens != 500 || got.Reserved != (Counters{}) {
		t.Errorf("after Close: used %+v reserved %+v, want 500 tokens settled", got.Used, got.Reserved)
	}
}
