package egress

import (
	"context"

	"github.com/coagent8/coagent8/internal/egress/ledger"
)

// Ledger is the disclosure accounting a [Decider] consumes;
// [*ledger.Ledger] implements it.
type Ledger interface {
	Claim(ctx context.Context, purpose string, c ledger.Ceiling, n int64, r ledger.Record) error
	Append(ctx context.Context, r ledger.Record) error
}

var _ Ledger = (*ledger.Ledger)(nil)

// Aliases so callers need not import the ledger package for these.
type (
	// Ceiling is [ledger.Ceiling].
	Ceiling = ledger.Ceiling
	// Record is [ledger.Record].
	Record = ledger.Record
)

// Ledger refusals, re-exported.
var (
	ErrUsesExhausted  = ledger.ErrUsesExhausted
	ErrBytesExhausted = ledger.ErrBytesExhausted
	ErrConfigConflict = ledger.ErrConfigConflict
)
