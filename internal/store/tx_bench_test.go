package store

import (
	"context"
	"testing"
)

// BenchmarkAdmissionTx is the shape of the provider gate's admission on
// either kind of transaction: BEGIN IMMEDIATE, two prepared writes,
// COMMIT, under a request's cancellable context or none. The difference
// between the kinds is the transaction machinery alone.
//
//	go test ./internal/store -run '^$' -bench AdmissionTx -benchmem
func BenchmarkAdmissionTx(b *testing.B) {
	for _, kind := range []string{"sql.Tx", "WriteTx"} {
		for _, cancellable := range []bool{false, true} {
			name := kind + "/background"
			if cancellable {
				name = kind + "/request"
			}
			b.Run(name, func(b *testing.B) { benchAdmission(b, kind, cancellable) })
		}
	}
}

func benchAdmission(b *testing.B, kind string, cancellable bool) {
	db := txDB(b, 0)
	w := txWriter(b, db)
	ctx := context.Background()
	if cancellable {
		c, cancel := context.WithCancel(ctx)
		defer cancel()
		ctx = c
	}
	if _, err := db.SQL().Exec(`INSERT INTO kv VALUES (0, 0)`); err != nil {
		b.Fatal(err)
	}
	upd, err := Prepare(ctx, db.SQL(), `UPDATE kv SET v = v + 1 WHERE k = 0`)
	if err != nil {
		b.Fatal(err)
	}
	ins, err := Prepare(ctx, db.SQL(), `INSERT INTO kv (v) VALUES (?)`)
	if err != nil {
		b.Fatal(err)
	}
	c, err := db.SQL().Conn(ctx) // sql.Tx on a pinned connection, as the gate had it
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		var tx Tx
		if kind == "WriteTx" {
			tx, err = w.Begin(ctx)
		} else {
			tx, err = c.BeginTx(ctx, nil)
		}
		if err != nil {
			b.Fatal(err)
		}
		if _, err := upd.Exec(ctx, tx); err != nil {
			b.Fatal(err)
		}
		if _, err := ins.Exec(ctx, tx, i); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}
