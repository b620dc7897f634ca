package egress

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"github.com/coagent8/coagent8/internal/crash"
	"io"
	"regexp"
	"slices"

	"github.com/coagent8/coagent8/internal/egress/lineage"
	"github.com/coagent8/coagent8/internal/redact"
)

// LineageSource returns the current fingerprint index of the labelled
// files, or an error wrapping [lineage.ErrUnknown]. [lineage.Workspace]
// implements it.
type LineageSource interface {
	Current() (*lineage.Index, error)
}

var _ LineageSource = (*lineage.Workspace)(nil)

// classification is what a body was found to contain.
type classification struct {
	weight     float64
	categories []Category
	labels     []int // matched label indexes, sorted
}

// answerRedactor finds credential formats in provider traffic
// (redact.NewTraffic: the gate's phantom is not one there).
var answerRedactor = redact.NewTraffic()

// classify weighs body under p. It fails (lineage unknown) when p has a
// path label and the index is unavailable or the body cannot be scanned.
func classify(p *Policy, src LineageSource, body []byte, isJSON bool) (classification, error) {
	c := classification{weight: p.deflt}
	// What the provider reads of a JSON body is its decoded strings: a
	// label's pattern and a credential format are also matched there,
	// every member kept (red team rt5: "K\u0065strel", a pattern across
	// a \n escape, a credential in a member a later one of the same name
	// shadows — all sent raw).
	var view []byte // nil: nothing decodes (every escape shortens the text)
	if isJSON {
		if v := DecodeEscapes(body); len(v) < len(body) {
			view = v
		}
	}
	// The credential scan and the lineage scan read the same bytes
	// independently: run them side by side (issue 10: decision latency
	// for a 100 KB body).
	cred := make(chan bool, 1)
	go scanCredential(cred, body, view, isJSON)
	if p.dependsOnLineage() {
		if src == nil {
			<-cred // the scan reads body: never return while it runs
			return c, lineage.ErrUnknown
		}
		idx, err := src.Current()
		if err != nil {
			<-cred
			return c, err
		}
		r, err := idx.Scan(body, isJSON, false)
		if err != nil {
			<-cred
			return c, err
		}
		for _, id := range r.Sources {
			c.labels = append(c.labels, int(id))
		}
	}
	for i, l := range p.labels {
		if slices.ContainsFunc(l.patterns, func(re *regexp.Regexp) bool { return re.Match(body) || view != nil && re.Match(view) }) {
			c.labels = append(c.labels, i)
		}
	}
	slices.Sort(c.labels)
	c.labels = slices.Compact(c.labels)
	for _, i := range c.labels {
		c.add(p.labels[i].weight, p.labels[i].category)
	}
	if <-cred {
		c.add(1, Credentials)
	}
	return c, nil
}

func (c *classification) add(w float64, k Category) {
	c.weight = max(c.weight, w)
	if !slices.Contains(c.categories, k) {
		c.categories = append(c.categories, k)
	}
}

// hasCredential reports whether the answer-profile redactor (the
// credential formats of R-048) would change body — or, for a JSON body
// that uses \u or \/ escapes, the decoded strings the provider will read:
// a credential written as "sk\u002dant\u002d…" reaches the provider whole
// (red-team finding). A JSON body that does not decode is treated as
// carrying one (fail closed).
func hasCredential(body []byte, isJSON bool) bool {
	if changes(body) {
		return true
	}
	if !isJSON || !(bytes.Contains(body, []byte(`\u`)) || bytes.Contains(body, []byte(`\/`))) {
		return false
	}
	v, err := decodeJSON(body)
	if err != nil {
		return true // fail closed: what the provider decodes cannot be read here
	}
	var decoded bytes.Buffer
	CollectStrings(v, &decoded)
	return changes(decoded.Bytes())
}

// scanCredential sends on cred whether body (or view, its decoded
// strings, when not nil) carries a credential format. It runs on its own
// goroutine over what a delegated agent wrote: a panic there would end
// the MCP server and every job in it, so it is recovered and fails
// closed (true: refused as carrying a credential).
func scanCredential(cred chan<- bool, body, view []byte, isJSON bool) {
	found := true
	defer func() { cred <- found }()
	defer crash.Stderr.Recover("egress credential scan", nil)
	found = credentialIn(body, isJSON) || view != nil && changes(view)
}

// credentialIn is hasCredential; a variable so a test can make the scan
// panic.
var credentialIn = hasCredential

// decodeJSON decodes body, a whole JSON value, reading numbers as
// json.Number: a valid number beyond float64 (1E1000) failed
// json.Unmarshal, and a body holding one next to a \u escape was refused
// as if it carried a credential (red team 2026-12-06).
func decodeJSON(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

func changes(b []byte) bool {
	out := answerRedactor.Bytes(b)
	return len(out) != len(b) || !bytes.Equal(out, b)
}

// CollectStrings writes every string (object keys included) of a decoded
// JSON value (encoding/json's any: string, []any, map[string]any; other
// types are skipped) to w, one per line, so a redactor sees each whole,
// JSON escapes decoded. The gate's response check uses it too.
func CollectStrings(v any, w *bytes.Buffer) {
	switch t := v.(type) {
	case string:
		w.WriteString(t)
		w.WriteByte('\n')
	case []any:
		for _, e := range t {
			CollectStrings(e, w)
		}
	case map[string]any:
		for k, e := range t {
			w.WriteString(k)
			w.WriteByte('\n')
			CollectStrings(e, w)
		}
	}
}

// influence is the digest of the matched label set (restricted).
func (c classification) influence() [32]byte {
	h := sha256.New()
	for _, i := range c.labels {
		h.Write([]byte{byte(i >> 8), byte(i)})
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// effective is the baseline narrowed by every target rule that matches t
// rules only narrow).
type effective struct {
	portal, forbidden float64
	nonDecl           map[Category]bool
	denied            bool
}

func (p *Policy) effective(t PortalTarget, purpose Purpose) effective {
	e := effective{portal: p.portal, forbidden: p.forbidden, nonDecl: p.nonDecl}
	for _, r := range p.targets {
		if r.Provider != t.Provider || (r.Model != "" && r.Model != t.Model) {
			continue
		}
		if r.PortalThreshold != nil {
			e.portal = min(e.portal, *r.PortalThreshold)
		}
		if r.ForbiddenThreshold != nil {
			e.forbidden = min(e.forbidden, *r.ForbiddenThreshold)
		}
		if len(r.NonDeclassifiable) > 0 {
			e.nonDecl = mergeCats(e.nonDecl, r.NonDeclassifiable)
		}
		e.denied = e.denied || slices.Contains(r.DenyPurposes, purpose)
	}
	return e
}

func mergeCats(a map[Category]bool, b []Category) map[Category]bool {
	out := map[Category]bool{}
	for k := range a {
		out[k] = true
	}
	for _, k := range b {
		out[k] = true
	}
	return out
}
