package lineage

// Winnowing parameters. K is the k-gram length in normalized bytes, W the
// window of consecutive k-gram hashes one fingerprint is chosen from.
const (
	K = 20
	W = 12
	// Guarantee is the shortest shared normalized substring that is always
	// detected (K+W-1 bytes: about one line of code without whitespace).
	Guarantee = K + W - 1
)

// base is the rolling-hash multiplier (odd, so multiplication is a
// bijection mod 2^64); basePowK is base^K, for removing the byte leaving.
const base = 0x100000001b3

var basePowK = func() uint64 {
	p := uint64(1)
	for range K {
		p *= base
	}
	return p
}()

// mix scrambles a rolling hash so that the window minimum is not biased
// by the last bytes (the polynomial hash's low bits depend on few bytes).
func mix(h uint64) uint64 {
	h ^= h >> 31
	h *= 0xbf58476d1ce4e5b9
	return h ^ h>>32
}

// slot is a k-gram hash at a position (the k-gram's first byte).
type slot struct {
	h   uint64
	pos int32
}

// winnow calls f with every fingerprint of b (one segment) — the
// rightmost minimal hash of each window of W k-grams, each position once —
// and its position in b. The deque ring keeps candidate minima in
// increasing hash order.
func winnow(b []byte, off int32, ring *[W]slot, f func(h uint64, pos int32)) {
	if len(b) < K {
		return
	}
	var h uint64
	head, n := 0, 0
	last := int32(-1)
	for i := range b {
		h = h*base + uint64(b[i])
		if i >= K {
			h -= basePowK * uint64(b[i-K])
		}
		if i < K-1 {
			continue
		}
		p := int32(i - K + 1)
		s := slot{mix(h), p}
		for n > 0 && ring[wrap(head+n-1)].h >= s.h {
			n-- // rightmost minimum: an equal newer hash replaces older ones
		}
		ring[wrap(head+n)] = s
		n++
		if ring[head].pos <= p-W {
			head, n = wrap(head+1), n-1
		}
		if p >= W-1 || i == len(b)-1 {
			if m := ring[head]; m.pos != last {
				f(m.h, m.pos+off)
				last = m.pos
			}
		}
	}
}

// wrap reduces a ring index below 2W into [0, W) without a division.
func wrap(i int) int {
	if i >= W {
		return i - W
	}
	return i
}
