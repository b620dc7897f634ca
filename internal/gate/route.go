package gate

import (
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
)

// Route is one admitted method and path of a provider.
type Route struct {
	Provider Provider
	Method   string
	Path     string
	// Metered routes carry a model and are reserved and settled; unmetered
	// ones (token counting, model listing) still need a live grant of the
	// provider but consume no budget.
	Metered bool
	// Headers are the client headers forwarded upstream, in canonical
	// form (issue 18 scope 1): the ones the provider needs. Every other
	// client header is dropped; the gate adds only the real credential
	// and Accept-Encoding: identity.
	Headers []string
	// Query names the query parameters the route admits (Claude Code's
	// beta=true, Codex's client_version); any other parameter, a repeated
	// one or a value outside its form (beta: true or false; client_version:
	// a numeric version, digits and dots) is refused: the query travels
	// as sent and the egress decision does not scan it for content, so it
	// must not be a free channel (issue 18 scope 1).
	Query []string
}

// routes is the complete allowlist (requirements §1.13 project decision;
// notes/gate.md §2). Paths are matched exactly on the parsed path; the
// query is ignored for matching and forwarded as sent (Claude Code's
// ?beta=true).
var routes = []Route{
	{Anthropic, http.MethodPost, "/v1/messages", true, anthropicHeaders, []string{"beta"}},
	{Anthropic, http.MethodPost, "/v1/messages/count_tokens", false, anthropicHeaders, []string{"beta"}},
	{OpenAI, http.MethodPost, "/v1/responses", true, openAIHeaders, nil},
	{OpenAI, http.MethodPost, "/v1/responses/compact", true, openAIHeaders, nil},
	{OpenAI, http.MethodGet, "/v1/models", false, []string{"Accept"}, []string{"client_version"}},
}

// The header allowlists (notes/gate.md §2, §6): the API version and beta
// flags Anthropic reads, and the content negotiation both need. Sorted.
// Session ids, user agents, stainless telemetry, cookies and anything an
// agent adds are not here and never leave.
var (
	anthropicHeaders = []string{"Accept", "Anthropic-Beta", "Anthropic-Version", "Content-Type"}
	openAIHeaders    = []string{"Accept", "Content-Type", "Openai-Beta"}
)

// Routes returns a copy of the allowlist.
func Routes() []Route {
	out := append([]Route(nil), routes...)
	for i := range out {
		out[i].Headers = append([]string(nil), out[i].Headers...)
	}
	return out
}

// matchRoute returns the admitted route for r, or a denial reason. The path
// must be in canonical form: no percent-encoding, no dot segments, no
// doubled slashes, so what is matched is exactly what is forwarded.
func matchRoute(r *http.Request) (Route, string) {
	p := r.URL.Path
	if len(p) > 256 || r.URL.RawPath != "" || strings.Contains(r.URL.EscapedPath(), "%") || path.Clean(p) != p {
		return Route{}, ReasonPathForm
	}
	for _, rt := range routes {
		if rt.Method == r.Method && rt.Path == p {
			return rt, ""
		}
	}
	return Route{}, ReasonRoute
}

// queryAllowed reports whether u's query holds only rt's parameters, each
// once, in its form ([queryToken]); an empty query is allowed, a bare "?"
// is not.
func queryAllowed(u *url.URL, rt Route) bool {
	raw := u.RawQuery
	if raw == "" {
		return !u.ForceQuery // a bare "?" is sent, not decided
	}
	q, err := url.ParseQuery(raw)
	if err != nil || len(raw) > 256 {
		return false
	}
	for k, vs := range q {
		if !slices.Contains(rt.Query, k) || len(vs) != 1 || !queryToken(k, vs[0]) {
			return false
		}
	}
	return true
}

// queryToken reports whether v is the form of parameter k: a boolean for
// beta, a numeric version ("0.169.0", at most 32 bytes) for client_version.
// A free-form token carried labelled content or a credential shape
// ("PROJECT-NIGHTJAR", "sk-ant-api03-…") upstream undecided (red team
// 2026-12-03).
func queryToken(k, v string) bool {
	if k == "beta" {
		return v == "true" || v == "false"
	}
	if v == "" || len(v) > 32 || v[0] == '.' || v[len(v)-1] == '.' || strings.Contains(v, "..") {
		return false
	}
	for i := 0; i < len(v); i++ {
		if (v[i] < '0' || v[i] > '9') && v[i] != '.' {
			return false
		}
	}
	return true
}

// isHello reports whether r is Claude Code's connectivity probe, which the
// gate answers itself without a credential or upstream contact.
func isHello(r *http.Request) bool {
	return (r.Method == http.MethodHead || r.Method == http.MethodGet) && r.URL.Path == "/api/hello"
}

// isUpgrade reports whether r asks for a protocol switch (WebSocket).
// Refusing it makes Codex fall back to HTTP streaming.
func isUpgrade(r *http.Request) bool {
	return r.Header.Get("Upgrade") != "" || headerHasToken(r.Header, "Connection", "upgrade") || r.Method == http.MethodConnect
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}
