package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Tx is a write transaction as the code writing inside a caller's
// transaction sees it (the egress claim, the gate's reservation):
// [*sql.Tx] and [*WriteTx] implement it, so that code runs on the pool's
// transactions and on a pinned writer's alike.
//
// The two differ after a failed statement: a *WriteTx rolls itself back
// at once and refuses every later call ([TxError]), a *sql.Tx leaves that
// to its caller. Callers roll back on any error, so both behave alike for
// them; a Row or Rows error surfaces only to its reader, who must act on
// it the same way.
type Tx interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	Commit() error
	Rollback() error
}

var (
	_ Tx = (*sql.Tx)(nil)
	_ Tx = (*WriteTx)(nil)
)

// Stmt is a statement prepared once on a database's pool that runs on the
// pool or inside either kind of [Tx]: a *sql.Tx binds the pool's prepared
// statement to its connection, a [*WriteTx] runs the copy prepared on its
// pinned connection (parsing SQL was about a third of a claim's cost:
// issue 9 benchmark). Safe for concurrent use.
type Stmt struct {
	query string
	pool  *sql.Stmt
}

// Prepare prepares query on db's pool. The statement lives until
// [Stmt.Close] or until db is closed.
func Prepare(ctx context.Context, db *sql.DB, query string) (*Stmt, error) {
	st, err := db.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare: %w", err)
	}
	return &Stmt{query: query, pool: st}, nil
}

// Exec runs st with args inside tx, or on the pool when tx is nil.
func (st *Stmt) Exec(ctx context.Context, tx Tx, args ...any) (sql.Result, error) {
	switch t := tx.(type) {
	case nil:
		return st.pool.ExecContext(ctx, args...)
	case *sql.Tx:
		return t.StmtContext(ctx, st.pool).ExecContext(ctx, args...)
	}
	return tx.ExecContext(ctx, st.query, args...) // a WriteTx finds its own prepared copy
}

// QueryRow runs st with args inside tx, or on the pool when tx is nil.
func (st *Stmt) QueryRow(ctx context.Context, tx Tx, args ...any) *sql.Row {
	switch t := tx.(type) {
	case nil:
		return st.pool.QueryRowContext(ctx, args...)
	case *sql.Tx:
		return t.StmtContext(ctx, st.pool).QueryRowContext(ctx, args...)
	}
	return tx.QueryRowContext(ctx, st.query, args...)
}

// Close releases the pool's prepared statement. The copies on pinned
// writers are theirs ([Writer.Close]).
func (st *Stmt) Close() error { return st.pool.Close() }
