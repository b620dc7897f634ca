package lineage

import (
	"bytes"
	"errors"
	"sync"
)

// ErrUnknown reports that lineage cannot be established: a labelled file
// could not be read or fingerprinted, or a body could not be scanned.
var ErrUnknown = errors.New("lineage unknown")

// Index holds the fingerprints of labelled sources. Build it with
// [NewIndex] and [Index.Add]; after the last Add it is read-only and safe
// for concurrent [Index.Scan] calls.
type Index struct {
	prints map[uint64][]int32 // fingerprint → source ids
	bloom  []uint64           // one bit per fingerprint's top bloomBits bits: skips most map lookups
	tiny   []tiny             // sources shorter than Guarantee
	n      int
}

type tiny struct {
	id   int32
	text []byte
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{prints: map[uint64][]int32{}, bloom: make([]uint64, 1<<(bloomBits-6))}
}

// bloomBits sizes the prefilter: 2^20 bits = 128 KiB.
const bloomBits = 20

func (x *Index) mayHave(h uint64) bool {
	b := h >> (64 - bloomBits)
	return x.bloom[b>>6]&(1<<(b&63)) != 0
}

// Add fingerprints content as source id (a caller-chosen small integer).
// Content that normalizes to nothing adds nothing.
func (x *Index) Add(id int32, content []byte) {
	var n norm
	n.text(content)
	x.n++
	if len(n.b) == 0 {
		return
	}
	if len(n.b) < Guarantee {
		x.tiny = append(x.tiny, tiny{id, bytes.Clone(n.b)})
		return
	}
	var ring [W]slot
	winnow(n.b, 0, &ring, func(h uint64, _ int32) {
		b := h >> (64 - bloomBits)
		x.bloom[b>>6] |= 1 << (b & 63)
		ids := x.prints[h]
		if len(ids) == 0 || ids[len(ids)-1] != id {
			x.prints[h] = append(ids, id)
		}
	})
}

// Sources returns how many sources were added.
func (x *Index) Sources() int { return x.n }

// Span is a raw byte range [Start, End) of a scanned body attributed to a
// source.
type Span struct {
	Start, End int
	Source     int32
}

// Result is what a scan found: the matched source ids (sorted, unique)
// and, when asked for, the raw spans covering the matched content.
type Result struct {
	Sources []int32
	Spans   []Span
}

var norms = sync.Pool{New: func() any { return new(norm) }}

// Scan reports which sources influenced body. isJSON selects JSON mode
// (only string contents count; a malformed body returns [ErrUnknown]).
// spans asks for the raw byte ranges to replace (slower: it records the
// origin of every normalized byte).
func (x *Index) Scan(body []byte, isJSON, spans bool) (Result, error) {
	n := norms.Get().(*norm)
	defer norms.Put(n)
	n.reset(spans)
	if isJSON {
		if err := n.json(body); err != nil {
			return Result{}, errors.Join(ErrUnknown, err)
		}
	} else {
		n.text(body)
	}
	var s scan
	s.run(x, n)
	return s.result(n), nil
}
