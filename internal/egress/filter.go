package egress

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"slices"
	"time"

	"github.com/coagent8/coagent8/internal/egress/lineage"
)

// FilterName is the privacy filter's instance name; its digest with the
// policy revision is the filter instance of [FilterEvidence].
const FilterName = "coagent8-placeholder-filter@1"

// filterRun is one run of the privacy filter (seed 001 "Privacy Cut"):
// deterministic, so the same body under the same policy yields the same
// candidate and receipt chain.
type filterRun struct {
	p        *Policy
	src      LineageSource
	portal   float64
	receipts []Receipt
}

// run transforms body and verifies the candidate. Any failure is a
// refusal: the caller must not send body.
func (f *filterRun) run(body []byte, isJSON bool, now time.Time) ([]byte, FilterEvidence, bool) {
	spans, ok := f.spans(body, isJSON)
	if !ok {
		return nil, FilterEvidence{}, false
	}
	out := f.step("labelled-spans", body, replace(body, spans, f.p), len(spans))
	cred := answerRedactor.Bytes(out)
	out = f.step("credentials", out, cred, bytes.Count(cred, []byte("[REDACTED:"))-bytes.Count(out, []byte("[REDACTED:")))
	if !f.verify(out, isJSON) {
		return nil, FilterEvidence{}, false
	}
	ev := FilterEvidence{candidate: sha256.Sum256(out), chain: f.receipts[len(f.receipts)-1].Digest,
		expires: now.Add(f.p.ttl), receipts: f.receipts}
	rev := f.p.revision
	ev.instance = sha256.Sum256(append([]byte(FilterName+"\x00"), rev[:]...))
	ev.verification = sha256.Sum256(slices.Concat([]byte("verified\x00"), ev.candidate[:], ev.chain[:], ev.instance[:]))
	return out, ev, true
}

// spans returns the labelled spans at or above the portal threshold:
// lineage matches and pattern matches.
func (f *filterRun) spans(body []byte, isJSON bool) ([]lineage.Span, bool) {
	var out []lineage.Span
	if f.p.dependsOnLineage() {
		idx, err := f.src.Current()
		if err != nil {
			return nil, false
		}
		r, err := idx.Scan(body, isJSON, true)
		if err != nil {
			return nil, false
		}
		for _, s := range r.Spans {
			if f.p.labels[s.Source].weight >= f.portal {
				out = append(out, s)
			}
		}
	}
	for i, l := range f.p.labels {
		if l.weight < f.portal {
			continue
		}
		for _, re := range l.patterns {
			for _, m := range re.FindAllIndex(body, -1) {
				out = append(out, lineage.Span{Start: m[0], End: m[1], Source: int32(i)})
			}
		}
	}
	return out, true
}

// step appends a receipt chained to the previous one.
func (f *filterRun) step(name string, in, out []byte, count int) []byte {
	r := Receipt{Step: name, Count: count, In: sha256.Sum256(in), Out: sha256.Sum256(out)}
	if n := len(f.receipts); n > 0 {
		r.Prev = f.receipts[n-1].Digest
	}
	r.Digest = sha256.Sum256(slices.Concat([]byte(name+"\x00"), []byte{byte(count >> 24), byte(count >> 16), byte(count >> 8), byte(count)},
		r.In[:], r.Out[:], r.Prev[:]))
	f.receipts = append(f.receipts, r)
	return out
}

// verify checks that the candidate carries none of the flagged content:
// well-formed JSON when the body was JSON, and a fresh classification
// below the portal threshold with no non-declassifiable category.
func (f *filterRun) verify(out []byte, isJSON bool) bool {
	if isJSON && !json.Valid(out) {
		return false
	}
	c, err := classify(f.p, f.src, out, isJSON)
	if err != nil || c.weight >= f.portal {
		return false
	}
	return !slices.ContainsFunc(c.categories, func(k Category) bool { return f.p.nonDecl[k] })
}

// replace substitutes each span (merged when overlapping) with a
// placeholder naming only the label's category, a closed enum: the
// label's own name could itself disclose something.
func replace(b []byte, spans []lineage.Span, p *Policy) []byte {
	if len(spans) == 0 {
		return b
	}
	slices.SortFunc(spans, func(a, b lineage.Span) int { return a.Start - b.Start })
	out := make([]byte, 0, len(b))
	last := 0
	for i := 0; i < len(spans); i++ {
		s := spans[i]
		for i+1 < len(spans) && spans[i+1].Start <= s.End {
			i++
			s.End = max(s.End, spans[i].End)
		}
		if s.Start < last {
			s.Start = last
		}
		out = append(out, b[last:s.Start]...)
		out = append(out, "[WITHHELD:"+string(p.labels[s.Source].category)+"]"...)
		last = s.End
	}
	return append(out, b[last:]...)
}
