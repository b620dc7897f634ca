package egress

import (
	"crypto/sha256"
	"slices"
	"strings"
)

// Header is one header field of the complete outgoing request, exactly as
// it will be written (canonical name, one value). The credential the
// provider gate injects is never a Header value: the gate lists it under
// its name with the value [CredentialPlaceholder], so the decision binds
// that a credential is sent and where, but never holds it.
type Header struct {
	Name, Value string
}

// CredentialPlaceholder stands for the injected provider credential in
// the request digest.
const CredentialPlaceholder = "[coagent8 gate credential]"

// requestDigest is the digest of the complete outgoing request (issue
// 18 scope 1; ): method, exact target (kind, provider,
// origin, request target, custody route), every forwarded header in
// order, and the body's digest. Length-prefixed, so no field can shift
// into another.
func requestDigest(t Transmission, body [32]byte) [32]byte {
	target := []byte(nil)
	if t.Target != nil {
		target = t.Target.encode()
	}
	fields := []string{"coagent8 request v1", t.Method, string(target)}
	for _, h := range t.Headers {
		fields = append(fields, h.Name, h.Value)
	}
	return sha256.Sum256(enc(append(fields, string(body[:]))...))
}

// headerBlob is the text of t's header values (one per line, with their
// names) as the classifier reads it. The placeholder of the injected
// credential is left out: it is the gate's own, not client content.
func headerBlob(hs []Header) []byte {
	var b strings.Builder
	for _, h := range hs {
		if h.Value == CredentialPlaceholder {
			continue
		}
		b.WriteString(h.Name)
		b.WriteString(": ")
		b.WriteString(h.Value)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// judgeHeaders decides the forwarded headers like the body (issue 18
// scope 1): a credential format or a non-declassifiable category refuses
// with [ReasonCategory]; a label matched at or above the effective
// portal_threshold refuses with [ReasonHeader], because a header cannot
// be privacy-filtered. The default classification of unlabelled content
// does not apply to header values (they are protocol fields, not
// content). It returns "" when the headers may go as they are.
func judgeHeaders(st *state, eff effective, hs []Header) string {
	blob := headerBlob(hs)
	if len(blob) == 0 {
		return ""
	}
	if hasCredential(blob, false) && eff.nonDecl[Credentials] {
		return ReasonCategory
	}
	if !st.p.dependsOnLineage() && !slices.ContainsFunc(st.p.labels, func(l label) bool { return len(l.patterns) > 0 }) {
		return "" // nothing else could label a header (the common case: no goroutine, no scan)
	}
	c, err := classify(st.p, st.src, blob, false)
	if err != nil {
		return ReasonLineage
	}
	for _, k := range c.categories {
		if eff.nonDecl[k] {
			return ReasonCategory
		}
	}
	if slices.ContainsFunc(c.labels, func(i int) bool { return st.p.labels[i].weight >= eff.portal }) {
		return ReasonHeader
	}
	return ""
}

// headerNames returns the names of hs, for the decision record.
func headerNames(hs []Header) []string {
	out := make([]string, 0, len(hs))
	for _, h := range hs {
		out = append(out, h.Name)
	}
	return out
}

// HeaderRecord is the decision record's list of header names (issue 18
// scope 1): "forwarded=a,b dropped=c,d" (lowercase), names only, at most
// 64 of each and 64 bytes per name (a name is client-chosen and could
// otherwise carry content into the log; the log is diagnostic-redacted as
// well). It is "" for a transmission without a method.
func (t Transmission) HeaderRecord() string {
	if t.Method == "" {
		return ""
	}
	return "forwarded=" + nameList(headerNames(t.Headers)) + " dropped=" + nameList(t.Dropped)
}

func nameList(names []string) string {
	const maxNames, maxLen = 64, 64
	out := make([]string, 0, min(len(names), maxNames)+1)
	for i, n := range names {
		if i == maxNames {
			out = append(out, "…")
			break
		}
		if len(n) > maxLen {
			n = n[:maxLen] + "…"
		}
		out = append(out, strings.ToLower(n))
	}
	return strings.Join(out, ",")
}
