package egress

import "time"

// Basis is the closed sum of disclosure bases: [RawEligible] or
// [FilterEvidence]. Values are built only by this package.
type Basis interface {
	basis() string
}

// RawEligible binds the facts that made untransformed bytes eligible: the
// weight, the categories found, the target, purpose and policy revision.
type RawEligible struct {
	weight     float64
	categories []Category
	target     [32]byte
	purpose    Purpose
	policy     [32]byte
}

// FilterEvidence binds a privacy-filter run: the filter instance digest,
// the final candidate digest, the terminal receipt-chain digest and the
// verification digest, valid until expires. A zero digest in any of them
// is not a basis.
type FilterEvidence struct {
	instance     [32]byte
	candidate    [32]byte
	chain        [32]byte
	verification [32]byte
	expires      time.Time
	receipts     []Receipt
}

func (RawEligible) basis() string    { return "raw-eligible" }
func (FilterEvidence) basis() string { return "filter-evidence" }

// Weight returns the classification that made the bytes eligible.
func (r RawEligible) Weight() float64 { return r.weight }

// Receipts returns the filter's transformation receipts, in order.
func (f FilterEvidence) Receipts() []Receipt { return append([]Receipt(nil), f.receipts...) }

// complete reports whether every digest is set (R-134: a nullable filter
// revision or a transformer's claim alone is not a basis).
func (f FilterEvidence) complete() bool {
	var zero [32]byte
	return f.instance != zero && f.candidate != zero && f.chain != zero && f.verification != zero && !f.expires.IsZero()
}

// Receipt is one transformation step of the privacy filter: which rule,
// how many replacements, and the digests of its input, output and the
// previous receipt (Prev is zero for the first).
type Receipt struct {
	Step   string
	Count  int
	In     [32]byte
	Out    [32]byte
	Prev   [32]byte
	Digest [32]byte
}
