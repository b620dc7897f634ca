package lineage

import (
	"bytes"
	"slices"
)

// scan accumulates the matches of one body.
type scan struct {
	ids  []int32
	hits []hit // normalized ranges, spans mode only
}

type hit struct {
	from, to int32 // normalized byte range
	seg      int   // segment index
	id       int32
}

func (s *scan) run(x *Index, n *norm) {
	for i, from := range n.segs {
		to := int32(len(n.b))
		if i+1 < len(n.segs) {
			to = n.segs[i+1]
		}
		seg := n.b[from:to]
		if len(x.prints) > 0 {
			s.kgrams(x, n, i, seg, from, to)
		}
		s.tiny(x, n, i, seg, from)
	}
}

// kgrams looks up every k-gram of one segment (not only its winnowed
// ones): a source's fingerprint anywhere in the body is found, so the
// K+W-1 guarantee holds. The bloom prefilter keeps this to a rolling hash
// and one bit test per byte.
func (s *scan) kgrams(x *Index, n *norm, i int, seg []byte, from, to int32) {
	var h uint64
	for j := range seg {
		h = h*base + uint64(seg[j])
		if j >= K {
			h -= basePowK * uint64(seg[j-K])
		}
		if j < K-1 {
			continue
		}
		m := mix(h)
		if !x.mayHave(m) {
			continue
		}
		p := from + int32(j-K+1)
		for _, id := range x.prints[m] {
			s.add(id, i, p, p+K, from, to, n.spans)
		}
	}
}

// tiny finds short sources by substring search within one segment.
func (s *scan) tiny(x *Index, n *norm, i int, seg []byte, from int32) {
	for _, t := range x.tiny {
		for off := 0; ; {
			j := bytes.Index(seg[off:], t.text)
			if j < 0 {
				break
			}
			p := from + int32(off+j)
			s.ids = append(s.ids, t.id)
			if !n.spans {
				break
			}
			s.hits = append(s.hits, hit{p, p + int32(len(t.text)), i, t.id})
			off += j + len(t.text)
		}
	}
}

// add records a fingerprint match. In spans mode the range is widened by
// W-1 on each side (within the segment): winnowing picks at least one
// fingerprint per W k-grams of shared text, so the widened ranges of a
// shared region's fingerprints cover the whole region.
func (s *scan) add(id int32, seg int, from, to, segFrom, segTo int32, spans bool) {
	s.ids = append(s.ids, id)
	if spans {
		s.hits = append(s.hits, hit{max(from-(W-1), segFrom), min(to+(W-1), segTo), seg, id})
	}
}

func (s *scan) result(n *norm) Result {
	slices.Sort(s.ids)
	r := Result{Sources: slices.Compact(s.ids)}
	if !n.spans || len(s.hits) == 0 {
		return r
	}
	slices.SortFunc(s.hits, func(a, b hit) int { return int(a.from - b.from) })
	cur := s.hits[0]
	for _, h := range s.hits[1:] {
		if h.seg == cur.seg && h.from <= cur.to {
			cur.to = max(cur.to, h.to)
			continue
		}
		r.Spans = append(r.Spans, n.raw(cur))
		cur = h
	}
	r.Spans = append(r.Spans, n.raw(cur))
	return r
}

// raw maps a normalized range to the raw bytes it came from.
func (n *norm) raw(h hit) Span {
	return Span{Start: int(n.start[h.from]), End: int(n.end[h.to-1]), Source: h.id}
}
