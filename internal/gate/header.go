package gate

import (
	"net/http"
	"slices"
	"strings"

	"github.com/coagent8/coagent8/internal/egress"
)

// Header bounds (issue 18, bad input). net/http's own limit (1 MiB)
// answers before the gate sees the request, unrecorded; the gate's
// tighter one is refused, counted and recorded like every other refusal.
const (
	maxHeaderBytes = 32 << 10 // all names and values of one request
	maxHeaderValue = 4 << 10  // one forwarded value
)

// wire is the header side of the complete outgoing request: exactly the
// fields the gate writes upstream, sorted by name, with the injected
// credential as [egress.CredentialPlaceholder], and the names of the
// client headers that were dropped.
type wire struct {
	forward []egress.Header
	dropped []string
}

// credentialHeader is where rt's provider takes its key.
func credentialHeader(p Provider) string {
	if p == Anthropic {
		return "X-Api-Key"
	}
	return "Authorization"
}

// checkHeaders vets r's header block and builds the upstream header set
// from rt's allowlist (issue 18 scope 1). It returns a denial reason for
// an oversized block, a repeated credential header, or an allowlisted
// header that is repeated or not one printable-ASCII value.
func checkHeaders(r *http.Request, rt Route) (wire, string) {
	size := 0
	for name, vs := range r.Header {
		for _, v := range vs {
			size += len(name) + len(v) + 4
		}
	}
	switch {
	case size > maxHeaderBytes:
		return wire{}, ReasonHeaderSize
	case len(r.Header["X-Api-Key"]) > 1 || len(r.Header["Authorization"]) > 1 || len(r.Header["Proxy-Authorization"]) > 0:
		return wire{}, ReasonDuplicateCredential
	case !credentialForm(r.Header):
		return wire{}, ReasonHeaderForm
	}
	var w wire
	for _, name := range rt.Headers {
		vs, ok := r.Header[name]
		if !ok {
			continue
		}
		if len(vs) != 1 || !printable(vs[0]) {
			return wire{}, ReasonHeaderForm
		}
		w.forward = append(w.forward, egress.Header{Name: name, Value: vs[0]})
	}
	w.forward = append(w.forward, egress.Header{Name: "Accept-Encoding", Value: "identity"},
		egress.Header{Name: credentialHeader(rt.Provider), Value: egress.CredentialPlaceholder})
	slices.SortFunc(w.forward, func(a, b egress.Header) int { return strings.Compare(a.Name, b.Name) })
	for name := range r.Header {
		if !slices.Contains(rt.Headers, name) {
			w.dropped = append(w.dropped, name)
		}
	}
	slices.Sort(w.dropped)
	return w, ""
}

// printable reports whether v is a non-empty header value of printable
// ASCII without leading or trailing space, at most maxHeaderValue bytes.
// A folded (obs-fold) or multi-line value, a NUL or any non-ASCII byte
// is refused rather than normalised: what is decided is what is sent.
func printable(v string) bool {
	if v == "" || len(v) > maxHeaderValue || v[0] == ' ' || v[len(v)-1] == ' ' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return false
		}
	}
	return true
}

// credentialForm reports whether the presented credential headers are
// well formed: no space in x-api-key, exactly "Bearer <token>" in
// Authorization. net/http joins a folded (obs-fold) line with a space,
// so a folded credential shows here as a space and is refused.
func credentialForm(h http.Header) bool {
	k, a := h.Get("X-Api-Key"), h.Get("Authorization")
	if k != "" && (!printable(k) || strings.Contains(k, " ")) {
		return false
	}
	tok, ok := strings.CutPrefix(a, "Bearer ")
	return a == "" || (ok && printable(tok) && !strings.Contains(tok, " "))
}

// header returns the outgoing header of w with real in the credential's
// place: the only header set the upstream request carries.
func (w wire) header(real string, provider Provider) http.Header {
	h := make(http.Header, len(w.forward)+1)
	for _, f := range w.forward {
		v := f.Value
		if v == egress.CredentialPlaceholder {
			v = real
			if f.Name == "Authorization" {
				v = "Bearer " + real // OpenAI keys, Anthropic OAuth tokens
			}
		}
		h[f.Name] = []string{v}
	}
	return h
}
